// Over 400 lines: the page's whole client, served as written with no build step.
// The trial's page (workspace.ts serves it): two channels as Slack shows them, the bot's Block Kit
// rendered, a composer per channel that sends `/rmq …` as a slash command, buttons and forms that
// reach the bot as Slack's interactions, and a menu to act as another person.
//
// Everything shown comes from the bot or from what someone typed: the DOM is built from elements and
// text nodes only (no innerHTML anywhere), and links only for http(s) addresses, so a name the bot
// echoes is shown as written and never runs.

const $ = (id) => document.getElementById(id);

const EMOJI = {
  x: '❌',
  white_check_mark: '✅',
  heavy_check_mark: '✔️',
  warning: '⚠️',
  rotating_light: '🚨',
  hourglass: '⏳',
  hourglass_flowing_sand: '⏳',
  lock: '🔒',
  unlock: '🔓',
  mag: '🔍',
  information_source: 'ℹ️',
  no_entry: '⛔',
  no_entry_sign: '🚫',
  arrows_counterclockwise: '🔄',
  leftwards_arrow_with_hook: '↩️',
  clipboard: '📋',
  memo: '📝',
  hammer_and_wrench: '🛠️',
  fire: '🔥',
  red_circle: '🔴',
  large_green_circle: '🟢',
  large_yellow_circle: '🟡',
  eyes: '👀',
  boom: '💥',
  bell: '🔔',
  wastebasket: '🗑️',
  broken_heart: '💔',
  shield: '🛡️',
  stopwatch: '⏱️',
  link: '🔗',
  zap: '⚡',
  alarm_clock: '⏰',
  gear: '⚙️',
  grey_question: '❔',
  inbox_tray: '📥',
  pushpin: '📌',
  repeat: '🔁',
  snowflake: '❄️',
  sunny: '☀️',
  watch: '⌚',
};

let state = null;
let as = localStorage.getItem('rmq-trial-as') ?? 'U0ALICE';
let shownVersion = -1;
let shownAs = '';
let shownView = '';
let formErrors = {};

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null) continue;
    e.append(typeof c === 'string' ? document.createTextNode(c) : c);
  }
  return e;
}

const decode = (s) => s.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
const nameOf = (id) => state?.users.find((u) => u.id === id)?.name ?? (id === state?.bot ? 'rmq' : id);
const channelName = (id) => state?.channels.find((c) => c.id === id)?.name ?? id;

async function call(path, body) {
  const res = await fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ as, ...body }),
  });
  const answer = await res.json().catch(() => ({}));
  setTimeout(poll, 50);
  return answer;
}

// ---- mrkdwn ---------------------------------------------------------------------------------------

const INLINE =
  /(`[^`\n]+`)|(<[^<>\n]+>)|((?<![\w*])\*(?!\s)[^*\n]+?(?<!\s)\*(?![\w*]))|((?<![\w_])_(?!\s)[^_\n]+?(?<!\s)_(?![\w_]))|((?<![\w~])~(?!\s)[^~\n]+?(?<!\s)~(?![\w~]))|(:[a-z0-9_+-]+:)/g;

function inline(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(decode(text.slice(last, m.index)));
    const t = m[0];
    if (m[1]) out.push(el('code', {}, decode(t.slice(1, -1))));
    else if (m[2]) out.push(angle(t.slice(1, -1)));
    else if (m[3]) out.push(el('strong', {}, inline(t.slice(1, -1))));
    else if (m[4]) out.push(el('em', {}, inline(t.slice(1, -1))));
    else if (m[5]) out.push(el('s', {}, inline(t.slice(1, -1))));
    else out.push(EMOJI[t.slice(1, -1)] ?? t);
    last = m.index + t.length;
  }
  if (last < text.length) out.push(decode(text.slice(last)));
  return out;
}

function angle(inner) {
  const [target, label] = inner.split('|', 2);
  if (target.startsWith('@')) return el('span', { class: 'mention' }, `@${label ?? nameOf(target.slice(1))}`);
  if (target.startsWith('#'))
    return el('span', { class: 'mention' }, `#${label ?? channelName(target.slice(1))}`);
  // <!date^…|fallback> shows its fallback; <!here>, <!channel> are mentions.
  if (target.startsWith('!date')) return decode(label ?? target);
  if (target.startsWith('!')) return el('span', { class: 'mention' }, `@${decode(label ?? target.slice(1))}`);
  if (/^https?:\/\//i.test(target)) {
    const a = el('a', { target: '_blank', rel: 'noopener noreferrer' }, decode(label ?? target));
    a.href = decode(target);
    return a;
  }
  return decode(`<${inner}>`);
}

function mrkdwn(text) {
  const out = [];
  const parts = text.split(/```/);
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      out.push(el('pre', {}, decode(part.replace(/^\n/, ''))));
      return;
    }
    const lines = part.split('\n');
    lines.forEach((line, j) => {
      if (line.startsWith('&gt; ') || line === '&gt;') out.push(el('blockquote', {}, inline(line.slice(5))));
      else {
        out.push(...inline(line));
        if (j < lines.length - 1) out.push(el('br'));
      }
    });
  });
  return out;
}

const textOf = (t) => {
  if (!t || typeof t.text !== 'string') return [];
  return t.type === 'mrkdwn' ? mrkdwn(t.text) : [t.text];
};
const plainOf = (t) => (t && typeof t.text === 'string' ? t.text : '');

// ---- Block Kit ----------------------------------------------------------------------------------

/** `where`: { channel, ts } for a message, { viewId } for a modal. */
function element(e, blockId, where) {
  if (!e || typeof e !== 'object') return null;
  if (e.type === 'button') {
    const b = el(
      'button',
      { class: e.style, type: 'button', 'aria-label': e.accessibility_label },
      plainOf(e.text),
    );
    b.addEventListener('click', () => {
      const go = () =>
        act(where, {
          type: 'button',
          block_id: blockId,
          action_id: e.action_id,
          value: e.value,
          text: e.text,
        });
      if (e.confirm) confirmDialog(e.confirm, go);
      else go();
    });
    if (e.url && /^https?:\/\//i.test(e.url)) {
      const a = el('a', { target: '_blank', rel: 'noopener noreferrer' }, b);
      a.href = e.url;
      return a;
    }
    return b;
  }
  if (e.type === 'static_select' && !where.input) {
    const s = select(e);
    s.addEventListener('change', () => {
      const o = (e.options ?? []).find((x) => x.value === s.value);
      if (o)
        act(where, { type: 'static_select', block_id: blockId, action_id: e.action_id, selected_option: o });
    });
    return s;
  }
  if (e.type === 'overflow') {
    const s = el('select', { 'aria-label': 'More actions' }, el('option', { value: '' }, '⋯'));
    for (const o of e.options ?? []) s.append(el('option', { value: o.value }, plainOf(o.text)));
    s.addEventListener('change', () => {
      const o = (e.options ?? []).find((x) => x.value === s.value);
      if (o) act(where, { type: 'overflow', block_id: blockId, action_id: e.action_id, selected_option: o });
    });
    return s;
  }
  if (e.type === 'image') return el('span', { class: 'dim' }, `[image: ${e.alt_text ?? ''}]`);
  return el('span', { class: 'dim' }, `[${e.type}]`);
}

function select(e) {
  const s = el('select', {}, el('option', { value: '' }, plainOf(e.placeholder) || 'Choose…'));
  for (const o of e.options ?? []) {
    const opt = el('option', { value: o.value }, plainOf(o.text));
    if (e.initial_option?.value === o.value) opt.selected = true;
    s.append(opt);
  }
  return s;
}

function blocks(list, where) {
  const out = [];
  for (const b of Array.isArray(list) ? list : []) {
    const id = b.block_id;
    switch (b.type) {
      case 'section': {
        const body = el('div', {}, b.text ? el('div', {}, textOf(b.text)) : null);
        if (Array.isArray(b.fields))
          body.append(
            el(
              'div',
              { class: 'fields' },
              b.fields.map((f) => el('div', {}, textOf(f))),
            ),
          );
        out.push(
          el('div', { class: 'block section' }, body, b.accessory ? element(b.accessory, id, where) : null),
        );
        break;
      }
      case 'context':
        out.push(
          el(
            'div',
            { class: 'block context' },
            (b.elements ?? []).map((e) =>
              e.type === 'image' ? element(e, id, where) : el('span', {}, textOf(e)),
            ),
          ),
        );
        break;
      case 'actions':
        out.push(
          el(
            'div',
            { class: 'block actions' },
            (b.elements ?? []).map((e) => element(e, id, where)),
          ),
        );
        break;
      case 'divider':
        out.push(el('hr'));
        break;
      case 'header':
        out.push(el('div', { class: 'block header-block' }, plainOf(b.text)));
        break;
      case 'markdown':
        out.push(el('div', { class: 'block' }, mrkdwn(typeof b.text === 'string' ? b.text : '')));
        break;
      case 'input':
        out.push(inputBlock(b, where));
        break;
      case 'rich_text':
        out.push(el('div', { class: 'block' }, richText(b.elements)));
        break;
      default:
        out.push(el('div', { class: 'block dim' }, `[${String(b.type)} block]`));
    }
  }
  return out;
}

function richText(elements) {
  const text = [];
  const visit = (v) => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') {
      if (typeof v.text === 'string') text.push(v.text);
      if (v.elements) visit(v.elements);
    }
  };
  visit(elements);
  return text.join('');
}

function inputBlock(b, where) {
  const e = b.element ?? {};
  const key = `${b.block_id}/${e.action_id}`;
  const label = el(
    'label',
    { for: key },
    plainOf(b.label),
    b.optional ? el('span', { class: 'dim' }, ' (optional)') : null,
  );
  let control;
  if (e.type === 'plain_text_input') {
    control = el(e.multiline ? 'textarea' : 'input', {
      id: key,
      type: e.multiline ? undefined : 'text',
      placeholder: plainOf(e.placeholder) || undefined,
      maxlength: e.max_length,
      rows: e.multiline ? 4 : undefined,
    });
    control.value = e.initial_value ?? '';
    if (b.dispatch_action) {
      let timer;
      control.addEventListener('input', () => {
        clearTimeout(timer);
        timer = setTimeout(
          () =>
            act(where, {
              type: 'plain_text_input',
              block_id: b.block_id,
              action_id: e.action_id,
              value: control.value,
            }),
          500,
        );
      });
    }
  } else if (e.type === 'static_select') {
    control = select(e);
    control.id = key;
  } else if (e.type === 'checkboxes' || e.type === 'radio_buttons') {
    control = el('div', { id: key, role: 'group' });
    for (const o of e.options ?? []) {
      const initial =
        e.type === 'checkboxes' ? (e.initial_options ?? []) : e.initial_option ? [e.initial_option] : [];
      const box = el('input', {
        type: e.type === 'checkboxes' ? 'checkbox' : 'radio',
        name: key,
        value: o.value,
        checked: initial.some((i) => i.value === o.value),
      });
      control.append(el('label', {}, box, ' ', textOf(o.text)));
    }
  } else control = el('span', { class: 'dim' }, `[${String(e.type)}]`);
  control.dataset.block = b.block_id;
  control.dataset.action = e.action_id;
  control.dataset.kind = e.type;
  const error = formErrors[b.block_id];
  return el(
    'div',
    { class: 'input' },
    label,
    control,
    b.hint ? el('span', { class: 'dim' }, plainOf(b.hint)) : null,
    error ? el('span', { class: 'error', role: 'alert' }, error) : null,
  );
}

/** The modal's inputs as Slack's `view.state.values`. */
function formValues(root) {
  const values = {};
  for (const c of root.querySelectorAll('[data-kind]')) {
    const { block, action, kind } = c.dataset;
    let v;
    if (kind === 'plain_text_input') v = { type: kind, value: c.value === '' ? null : c.value };
    else if (kind === 'static_select') {
      const o = [...c.options].find((x) => x.selected && x.value !== '');
      v = {
        type: kind,
        selected_option: o ? { text: { type: 'plain_text', text: o.text }, value: o.value } : null,
      };
    } else if (kind === 'checkboxes' || kind === 'radio_buttons') {
      const chosen = [...c.querySelectorAll('input:checked')].map((i) => ({
        text: { type: 'plain_text', text: i.parentElement.textContent.trim() },
        value: i.value,
      }));
      v =
        kind === 'checkboxes'
          ? { type: kind, selected_options: chosen }
          : { type: kind, selected_option: chosen[0] ?? null };
    } else continue;
    values[block] = { ...(values[block] ?? {}), [action]: v };
  }
  return values;
}

function act(where, action) {
  if (where.viewId) {
    const root = document.querySelector('.modal');
    return call('/try/action', { viewId: where.viewId, action, values: root ? formValues(root) : {} });
  }
  return call('/try/action', { channel: where.channel, ts: where.ts, action });
}

function confirmDialog(c, go) {
  const overlay = el('div', { id: 'confirm', class: 'confirm-overlay' });
  const close = () => overlay.remove();
  overlay.append(
    el(
      'div',
      { class: 'modal', role: 'dialog', 'aria-label': plainOf(c.title) },
      el('h3', {}, plainOf(c.title)),
      el('div', { class: 'body' }, textOf(c.text)),
      el(
        'div',
        { class: 'foot' },
        el('button', { type: 'button', onclick: close }, plainOf(c.deny) || 'Cancel'),
        el(
          'button',
          {
            type: 'button',
            class: c.style === 'danger' ? 'danger' : 'primary',
            onclick: () => {
              close();
              go();
            },
          },
          plainOf(c.confirm) || 'Yes',
        ),
      ),
    ),
  );
  Object.assign(overlay.style, {
    position: 'fixed',
    inset: '0',
    display: 'flex',
    alignItems: 'center',
    justifyContent: 'center',
    background: 'rgb(0 0 0 / 40%)',
  });
  document.body.append(overlay);
}

// ---- the page -----------------------------------------------------------------------------------

function message(m) {
  const where = { channel: m.channel, ts: m.ts };
  const body = el('div', {});
  if (m.blocks && Array.isArray(m.blocks) && m.blocks.length > 0) body.append(...blocks(m.blocks, where));
  else body.append(...mrkdwn(m.text ?? ''));
  if (m.file)
    body.append(
      el(
        'details',
        { class: 'file' },
        el('summary', {}, `📎 ${m.file.title}`),
        el('pre', {}, m.file.content),
      ),
    );
  const time = new Date(Number(m.ts.split('.')[0]) * 1000).toLocaleTimeString();
  return el(
    'div',
    { class: `message${m.ephemeralTo ? ' ephemeral' : ''}`, 'data-ts': m.ts },
    el(
      'div',
      {},
      el('span', { class: 'who' }, nameOf(m.user)),
      ' ',
      el('span', { class: 'when' }, time),
      m.edited ? el('span', { class: 'dim' }, ' (edited)') : null,
    ),
    m.ephemeralTo ? el('div', { class: 'only' }, 'Only visible to you') : null,
    body,
  );
}

function channel(c) {
  const mine = state.messages.filter((m) => m.channel === c.id);
  const top = mine.filter((m) => !m.threadTs || m.threadTs === m.ts);
  const list = el('div', { class: 'messages', 'aria-label': `Messages in #${c.name}`, role: 'log' });
  for (const m of top) {
    list.append(message(m));
    const replies = mine.filter((r) => r.threadTs === m.ts && r.ts !== m.ts);
    if (replies.length) list.append(el('div', { class: 'thread' }, replies.map(message)));
  }
  // Replies whose parent is gone still show.
  for (const r of mine.filter(
    (x) => x.threadTs && x.threadTs !== x.ts && !top.some((t) => t.ts === x.threadTs),
  ))
    list.append(el('div', { class: 'thread' }, message(r)));
  const input = el('input', {
    type: 'text',
    'aria-label': `Message #${c.name}`,
    placeholder: c.id === 'C0TEAM' ? '/rmq which orders.audit' : '/rmq requests',
    autocomplete: 'off',
  });
  const form = el('form', { class: 'composer' }, input, el('button', { type: 'submit' }, 'Send'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = input.value;
    input.value = '';
    if (text.trim()) call('/try/command', { channel: c.id, text });
  });
  return el('section', { class: 'channel', 'data-channel': c.id }, el('h2', {}, `#${c.name}`), list, form);
}

function modal(view) {
  const where = { viewId: view.id, input: true };
  const root = el('div', { class: 'modal', role: 'dialog', 'aria-label': plainOf(view.title) });
  const formError = formErrors[''];
  root.append(
    el('h3', {}, plainOf(view.title)),
    el(
      'div',
      { class: 'body' },
      blocks(view.blocks, where),
      formError ? el('p', { class: 'form-error', role: 'alert' }, formError) : null,
    ),
    el(
      'div',
      { class: 'foot' },
      el(
        'button',
        { type: 'button', onclick: () => call('/try/close', { viewId: view.id }) },
        plainOf(view.close) || 'Cancel',
      ),
      view.submit
        ? el(
            'button',
            {
              type: 'button',
              class: 'primary',
              onclick: async () => {
                const answer = await call('/try/submit', { viewId: view.id, values: formValues(root) });
                formErrors = answer.errors ?? {};
                if (answer.errors) render(true);
              },
            },
            plainOf(view.submit),
          )
        : null,
    ),
  );
  return root;
}

function render(force = false) {
  // Typed text survives a re-render: the channels' composers and the open form keep their values.
  const typed = new Map(
    [...document.querySelectorAll('input[type=text], textarea')].map((i) => [
      i.getAttribute('aria-label') ?? i.id,
      i.value,
    ]),
  );
  const focused = document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.id;
  const scrolls = new Map(
    [...document.querySelectorAll('.messages')].map((m) => [
      m.getAttribute('aria-label'),
      m.scrollHeight - m.scrollTop - m.clientHeight,
    ]),
  );

  const channels = $('channels');
  channels.replaceChildren(...state.channels.map(channel));
  for (const m of channels.querySelectorAll('.messages')) {
    const fromBottom = scrolls.get(m.getAttribute('aria-label'));
    m.scrollTop =
      fromBottom === undefined || fromBottom < 40
        ? m.scrollHeight
        : m.scrollHeight - m.clientHeight - fromBottom;
  }

  const overlay = $('overlay');
  const viewKey = state.view ? `${state.view.id}/${state.view.hash}` : '';
  if (force || viewKey !== shownView) {
    const sameView = state.view && shownView.startsWith(`${state.view.id}/`);
    if (!sameView) formErrors = {};
    overlay.replaceChildren(...(state.view ? [modal(state.view)] : []));
    overlay.hidden = !state.view;
    shownView = viewKey;
  }
  for (const i of document.querySelectorAll('input[type=text], textarea')) {
    const key = i.getAttribute('aria-label') ?? i.id;
    if (typed.has(key) && typed.get(key) !== '') i.value = typed.get(key);
  }
  if (focused) {
    const f = [...document.querySelectorAll('input, textarea')].find(
      (i) => (i.getAttribute('aria-label') ?? i.id) === focused,
    );
    f?.focus();
  }

  $('notices').replaceChildren(...state.notices.map((n) => el('p', {}, `⚠ ${n.text}`)));
}

async function poll() {
  try {
    const res = await fetch(`/try/state?as=${encodeURIComponent(as)}`);
    state = await res.json();
  } catch {
    return;
  }
  const select = $('as');
  if (select.options.length === 0) {
    for (const u of state.users) select.append(el('option', { value: u.id }, `${u.name} (${u.role})`));
    select.value = as;
    select.addEventListener('change', () => {
      as = select.value;
      localStorage.setItem('rmq-trial-as', as);
      poll();
    });
  }
  if (state.version !== shownVersion || as !== shownAs) {
    shownVersion = state.version;
    shownAs = as;
    render();
  }
}

poll();
setInterval(poll, 500);
