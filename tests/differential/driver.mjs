// Drives the TypeScript reference through its public API for one scenario (tests/differential/scenario.py) and
// records the oracle: the SQLite file as it stood before the queries, and every query's answer.
//
//   TZ=UTC node driver.mjs <reference checkout with dist/> <scenario.json> <output .sqlite> <output answers .json>
//
// The callbacks are deterministic fakes that return what the scenario prescribes: the summarizer the n-th
// summary, the extractor the events planned for the target block's sequence number, the projector the changes
// planned for each event of its batch. Ids are counters, UUID-shaped or mixed case, from a seeded hash.
import { copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [referenceDir, scenarioPath, databasePath, answersPath] = process.argv.slice(2);
const { StrataGate, memoryWeightAt } = await import(pathToFileURL(join(referenceDir, 'dist', 'index.js')).href);
const scenario = JSON.parse(readFileSync(scenarioPath, 'utf8'));
const workPath = `${databasePath}.work`;
for (const suffix of ['', '-wal', '-shm']) rmSync(`${workPath}${suffix}`, { force: true });

// JSON has no NaN or infinities: the scenario spells them as strings.
const NUMBERS = { NaN: Number.NaN, Infinity: Number.POSITIVE_INFINITY, '-Infinity': Number.NEGATIVE_INFINITY };
const number = (value) => (typeof value === 'string' && value in NUMBERS ? NUMBERS[value] : value);

// FNV-1a: ids depend only on (seed, prefix, count), so any implementation asking in the same order per
// prefix gets the same ids (tests/differential/replay.py makes the same ones).
function mix(seed, text) {
  let hash = (2166136261 ^ seed) >>> 0;
  for (const character of text) {
    hash ^= character.codePointAt(0);
    hash = Math.imul(hash, 16777619) >>> 0;
  }
  return hash;
}

function idFactory(style, seed) {
  const counters = new Map();
  return (prefix) => {
    const count = (counters.get(prefix) ?? 0) + 1;
    counters.set(prefix, count);
    if (style === 'counter') return `${prefix}_${count}`;
    const hash = mix(seed, `${prefix}:${count}`);
    if (style === 'mixed') return `${hash & 1 ? prefix.toUpperCase() : prefix}_${hash & 2 ? 'A' : 'b'}${count}`;
    const hex = [0, 1, 2, 3].map((salt) => mix(seed + salt, `${prefix}:${count}`).toString(16).padStart(8, '0')).join('');
    return `${prefix}_${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
  };
}

// The clock moves one minute per scenario step and stands still within one, so every implementation stamps
// a step's writes alike however often it reads the clock.
function options(space, clock) {
  let summaries = 0;
  return {
    database: workPath,
    namespace: space.namespace,
    blockTurnSize: space.blockTurnSize,
    now: () => new Date(clock.ms),
    idFactory: idFactory(space.idStyle, space.idSeed),
    elementIdFactory: idFactory(space.idStyle, space.idSeed + 7),
    summarizer: async (messages) => space.summaries[summaries++] ?? {
      l0Title: messages[0]?.content.slice(0, 40) ?? 'block', l0Tags: [], l1Summary: '', l2Keypoints: [],
      shouldExtract: false,
    },
    extractor: async ({ target }) => space.extractions[String(target.sequence)]
      ?? { shouldExtract: false, reason: 'nothing planned', events: [] },
    elementProjector: async ({ events }) => ({
      reason: 'planned',
      changes: events.flatMap((event) => space.projections[event.id] ?? []),
    }),
  };
}

async function runSteps(space, clock) {
  const memory = await StrataGate.open(options(space, clock));
  const errors = [];
  const eventIds = () => new Set(memory.listEvents().map(({ id }) => id));
  for (const [index, step] of space.steps.entries()) {
    clock.ms += 60_000;
    try {
      if (step.op === 'turn') {
        await memory.appendTurn(step.turn);
      } else if (step.op === 'use') {
        const elements = memory.listElements().filter(({ name }) => step.elementNames.includes(name));
        await memory.recordMemoryUse({ eventIds: step.eventIds.filter((id) => eventIds().has(id)),
          elementIds: elements.map(({ id }) => id) }, { receiptId: step.receiptId });
      } else if (eventIds().has(step.id)) {
        if (step.op === 'pin') await memory.pinEvent(step.id, step.pinned);
        if (step.op === 'forget') await memory.forgetEvent(step.id);
        if (step.op === 'restore') await memory.restoreEvent(step.id);
      }
    } catch (error) {
      errors.push({ step: index, op: step.op, message: String(error?.message ?? error) });
    }
  }
  await memory.close();
  return errors;
}

function answer(memory, call) {
  if (call.kind === 'searchRawMemory') {
    const hits = call.limit === undefined ? memory.searchRawMemory(call.query)
      : memory.searchRawMemory(call.query, number(call.limit));
    return hits.map((hit) => ({ blockId: hit.blockId, turnRange: hit.turnRange, messageId: hit.message.id,
      nearby: hit.nearby.map(({ id }) => id) }));
  }
  if (call.kind === 'expandElement') {
    const element = memory.expandElement(call.id, call.at);
    return { currentState: element.currentState, facts: element.facts.map((fact) => ({ id: fact.id,
      status: fact.status, validFrom: fact.validFrom ?? null, validTo: fact.validTo ?? null })) };
  }
  throw new Error(`unknown call kind ${call.kind}`);
}

async function runCalls(space, clock) {
  const memory = await StrataGate.open(options(space, clock));
  const results = [];
  for (const call of space.calls) {
    const callOptions = call.options === undefined ? undefined
      : { ...call.options, ...('limit' in call.options ? { limit: number(call.options.limit) } : {}) };
    let result;
    try {
      if (call.kind === 'searchEvents') {
        result = (await memory.searchEvents(call.query, callOptions)).map(({ event, score }) => ({ id: event.id,
          score }));
      } else if (call.kind === 'searchElements') {
        result = (await memory.searchElements(call.query, callOptions)).map((hit) => ({ factId: hit.id,
          elementId: hit.elementId, score: hit.score, status: hit.fact.status, value: hit.fact.value }));
      } else if (call.kind === 'expandElement' && call.elementName !== undefined) {
        const element = memory.listElements().find(({ name }) => name === call.elementName);
        if (!element) continue;
        result = answer(memory, { ...call, id: element.id });
        call.id = element.id;
      } else {
        result = answer(memory, call);
      }
    } catch (error) {
      result = { error: String(error?.message ?? error) };
    }
    results.push({ ...call, result });
  }
  const withoutRetrieval = ({ lastRetrievedAt, ...weight }) => weight;
  const state = {
    events: memory.listEvents().map((event) => ({ ...event, weight: withoutRetrieval(event.weight) })),
    elements: memory.listElements().map((element) => ({ ...element, weight: withoutRetrieval(element.weight) })),
    blocks: memory.listBlocks().map(({ pointerCurrentLevel, pointerAnchorLevel, pointerAnchorTurn, lastLiftedAt,
      ...block }) => block),
  };
  const turn = memory.turn;
  const weights = {
    events: Object.fromEntries(memory.listEvents().map((event) => [event.id, memoryWeightAt(event, turn)])),
    elements: Object.fromEntries(memory.listElements().map((element) => [element.id, memoryWeightAt(element, turn)])),
  };
  await memory.close();
  return { results, weights, state };
}

const namespaces = {};
const clocks = new Map(scenario.namespaces.map((space) => [space.namespace, { ms: Date.parse(space.start) }]));
for (const space of scenario.namespaces) {
  namespaces[space.namespace] = { stepErrors: await runSteps(space, clocks.get(space.namespace)) };
}
// The oracle file is the state every query reads: the reference's searches write lastRetrievedAt afterwards.
copyFileSync(workPath, databasePath);
for (const space of scenario.namespaces) {
  Object.assign(namespaces[space.namespace], await runCalls(space, clocks.get(space.namespace)));
}
for (const suffix of ['', '-wal', '-shm']) rmSync(`${workPath}${suffix}`, { force: true });
writeFileSync(answersPath, JSON.stringify({ seed: scenario.seed, node: process.version, namespaces }));
