/**
 * ops/prometheus-alerts.yml: a rules file Prometheus can load (groups of rules, each alert with an
 * expression, a severity and a summary) that names only metrics the bot exports: those registered
 * by createMetrics() (src/bot/metrics/metrics.ts, Node's default metrics included), histogram series by
 * their base name, and Prometheus's own `up`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createMetrics } from '../../src/bot/metrics/metrics.ts';
import { repoRoot } from '../support/built.ts';

interface Rule {
  alert?: string;
  record?: string;
  expr?: unknown;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const doc = parseYaml(readFileSync(join(repoRoot, 'ops/prometheus-alerts.yml'), 'utf8')) as {
  groups: { name: string; rules: Rule[] }[];
};
const rules = doc.groups.flatMap((g) => g.rules);

/** Identifiers of series in a PromQL expression: names followed by a selector, a range or nothing. */
function seriesNames(expr: string): string[] {
  const withoutStrings = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  const withoutLabels = withoutStrings.replace(/\{[^}]*\}/g, '{}');
  const names = withoutLabels.match(/\b[a-zA-Z_:][a-zA-Z0-9_:]*\b(?!\s*\()/g) ?? [];
  const keywords = new Set(
    'by without on ignoring group_left group_right and or unless bool offset sum avg min max count group stddev stdvar topk bottomk quantile count_values'.split(
      ' ',
    ),
  );
  const byClause = /\b(?:by|without|on|ignoring)\s*\(([^)]*)\)/g;
  const grouping = new Set(
    [...withoutLabels.matchAll(byClause)].flatMap((m) => (m[1] ?? '').split(/\s*,\s*/)),
  );
  return names.filter((n) => !keywords.has(n) && !grouping.has(n) && !/^\d/.test(n) && !/^[smhdwy]$/.test(n));
}

describe('ops/prometheus-alerts.yml', () => {
  it('is a rules file: named groups of alerts, each with an expression, a severity and a summary', () => {
    expect(doc.groups.length).toBeGreaterThan(0);
    expect(rules.length).toBeGreaterThanOrEqual(5);
    const names = new Set<string>();
    for (const rule of rules) {
      expect(rule.alert, JSON.stringify(rule)).toMatch(/^[A-Z][A-Za-z0-9]+$/);
      expect(names.has(rule.alert ?? ''), `${rule.alert} twice`).toBe(false);
      names.add(rule.alert ?? '');
      expect(typeof rule.expr, rule.alert).toBe('string');
      const expr = String(rule.expr);
      expect(expr.split('(').length, `${rule.alert}: parentheses`).toBe(expr.split(')').length);
      expect(rule.labels?.severity, rule.alert).toMatch(/^(page|warn)$/);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      if (rule.for !== undefined) expect(rule.for).toMatch(/^\d+[smh]$/);
    }
  });

  it('names only metrics the bot exports', async () => {
    const exported = new Set((await createMetrics().registry.getMetricsAsJSON()).map((m) => m.name));
    const named = new Set(rules.flatMap((r) => seriesNames(String(r.expr))));
    expect(named.size).toBeGreaterThan(4);
    for (const name of named) {
      if (name === 'up') continue;
      const base = name.replace(/_(bucket|sum|count)$/, '');
      expect(exported.has(name) || exported.has(base), `${name} is not exported by the bot`).toBe(true);
    }
  });

  it('pages on links that should run and do not, missing ones included', async () => {
    const rule = rules.find((r) => r.alert === 'RmqLinksDown');
    expect(rule?.labels?.severity).toBe('page');
    const expr = String(rule?.expr);
    expect(seriesNames(expr)).toEqual(['rmq_links']);
    for (const state of ['missing', 'stopped', 'stuck']) expect(expr).toContain(state);
    // The states it sums are states the metric has: a reading's counts, as the watch sets them.
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.linksCounted('prod', {
      expected: 3,
      running: 0,
      starting: 0,
      missing: 1,
      stopped: 1,
      stuck: 1,
      unexpected: 0,
      unknown: 0,
    });
    const states = (await metrics.links.get()).values.map((v) => v.labels.state);
    for (const state of ['missing', 'stopped', 'stuck']) expect(states).toContain(state);
  });

  it('finds a misspelt metric (the check itself can fail)', async () => {
    const exported = new Set((await createMetrics().registry.getMetricsAsJSON()).map((m) => m.name));
    const named = seriesNames('sum by (env) (rate(rmq_broker_call_erors_total{code="x"}[5m])) > 0');
    expect(named).toEqual(['rmq_broker_call_erors_total']);
    expect(exported.has('rmq_broker_call_erors_total')).toBe(false);
  });
});
