import type { ArgumentNote } from '../arguments.ts';
import type { EffectiveValue, KeyDiff } from '../effective.ts';
import type { PatternCache } from '../pattern/pattern.ts';
import type { PolicyIndex } from '../policyIndex.ts';
import type { Risk } from '../risks.ts';
import type { BrokerVersion, ObjectKind, Policy, PolicyLayer } from '../types.ts';

/**
 * What a simulation reads and says (simulate.ts): the change, the objects of the inventory, and
 * the outcome for each object. Types only, so that every module of the simulation shares them.
 */

export type ChangeAction = 'create' | 'edit' | 'delete';

export interface PolicyChange {
  readonly action: ChangeAction;
  readonly layer: PolicyLayer;
  /** The policy as it is now; null for a create. */
  readonly before: Policy | null;
  /** The policy as proposed; null for a delete. */
  readonly after: Policy | null;
}

/** One queue or exchange, as the inventory listed it. */
export interface InventoryObject {
  readonly name: string;
  /** null: a queue of a type this bot does not know (its vetoes are unknown). */
  readonly kind: ObjectKind | null;
  /** The broker's type word, for queues of unknown type. */
  readonly type?: string;
  readonly arguments: Readonly<Record<string, unknown>>;
  /** The user policy the broker reports: a name, null for none, undefined when not reported. */
  readonly policy: string | null | undefined;
  /** The operator policy the broker reports, when the listing carries it. */
  readonly operatorPolicy?: string | null | undefined;
}

export interface ObjectOutcome extends KeyDiff {
  readonly name: string;
  readonly kind: ObjectKind;
  /** The changed layer's policy (the operator policy for an operator change). */
  readonly before: { policy: string | null; candidates?: string[] };
  /** `policy` is null and `candidates` lists the tie when the broker's choice is undefined. */
  readonly after: { policy: string | null; candidates?: string[] };
  /** The other layer, which the change leaves as it is. */
  readonly unchangedLayer: {
    layer: PolicyLayer;
    policy: string | null;
    candidates?: string[];
    source: 'broker' | 'engine';
  };
  /** After a tie: what each candidate would give. `lost`/`gained`/`changed` then hold only what all agree on. */
  readonly ifCandidate?: Record<string, KeyDiff>;
  /** Where each key's effective value after the change comes from (user policy, operator policy, both). */
  readonly heldBy: Record<string, EffectiveValue['from']>;
  /** Keys the user policy gave (or shared) before and only the operator policy gives after: not lost. */
  readonly keptByOperator?: string[];
  /** Keys the object's own arguments also set, and which value holds (reference section 6). */
  readonly arguments?: Record<string, ArgumentNote>;
  /**
   * Keys it loses, gains or changes that its type takes and does nothing with on this broker
   * (keyHasEffect, as `which`'s `effective.<key>.noEffect`): max-length on an exchange.
   */
  readonly noEffect?: string[];
  /**
   * Every value the object really uses before and after (both layers and its own arguments, by
   * provenance.ts): what the rules of immediate effect (impact.ts) read. Not part of the --json.
   */
  readonly inUse: {
    readonly before: Record<string, unknown>;
    readonly after: Record<string, unknown>;
    /** After a tie in either layer: the values under each other pair of candidates (`after`: the assumed one). */
    readonly tie?: readonly Readonly<Record<string, unknown>>[];
  };
  /** What the object really loses, by risk, first the worst. */
  readonly risks: Risk[];
  /** Risks under some tie candidates only. */
  readonly possibleRisks?: Risk[];
  /** The change leaves the broker's choice undefined where it was defined. */
  readonly newTie?: true;
  /** The new pattern is unanchored and reaches this name without it starting with the pattern. */
  readonly unanchoredCatch?: true;
  readonly notes?: string[];
}

export interface Unpredictable {
  readonly name: string;
  readonly kind: ObjectKind | string;
  readonly why: string;
}

export interface SimulationResult {
  /** Worst risk first, then new ties, then the rest; by name within each. */
  readonly objects: ObjectOutcome[];
  readonly unpredictable: Unpredictable[];
  /** Names an unanchored proposed pattern reaches without them starting with it (at most CATCH_NAMES listed). */
  readonly unanchoredCatch: {
    readonly pattern: string;
    readonly count: number;
    readonly names: string[];
  } | null;
  /** Objects of the vhost read to get here. */
  readonly scanned: { readonly queues: number; readonly exchanges: number };
}

/** One layer's policies, or an index of them that several simulations share (`PolicyIndex.replacing`). */
export type Layer = readonly Policy[] | PolicyIndex;

export interface SimulationInput {
  readonly version: BrokerVersion;
  /** The vhost's policies and operator policies as they are now. */
  readonly user: Layer;
  readonly operator: Layer;
  readonly change: PolicyChange;
  readonly cache?: PatternCache;
}
