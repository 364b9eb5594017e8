// Drives the TypeScript reference through its public API for one scenario (tests/differential/scenario.py) and
// records the oracle: the SQLite file as it stood before the queries, and every query's answer.
//
//   TZ=UTC node driver.mjs <reference checkout with dist/> <scenario.json> <output .sqlite> <output answers .json>
//
// The callbacks are deterministic fakes that return what the scenario prescribes: the summarizer the n-th
// summary, the extractor the events planned for the target block's sequence number, the projector the changes
// planned for each event of its batch. Ids come from a counter, a seeded UUID generator or mixed-case counters.
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

function seededRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function idFactory(style, seed) {
  const random = seededRandom(seed);
  const counters = new Map();
  const hex = (length) => Array.from({ length }, () => Math.floor(random() * 16).toString(16)).join('');
  return (prefix) => {
    const next = (counters.get(prefix) ?? 0) + 1;
    counters.set(prefix, next);
    if (style === 'uuid') return `${prefix}_${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
    if (style === 'mixed') return `${random() < 0.5 ? prefix.toUpperCase() : prefix}_${random() < 0.5 ? 'A' : 'b'}${next}`;
    return `${prefix}_${next}`;
  };
}

function options(space) {
  let clock = Date.parse(space.start);
  let summaries = 0;
  const ids = idFactory(space.idStyle, space.idSeed);
  const elementIds = idFactory(space.idStyle, space.idSeed + 1);
  return {
    database: workPath,
    namespace: space.namespace,
    blockTurnSize: space.blockTurnSize,
    now: () => {
      clock += 60_000;
      return new Date(clock);
    },
    idFactory: ids,
    elementIdFactory: elementIds,
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

async function runSteps(space) {
  const memory = await StrataGate.open(options(space));
  const errors = [];
  const eventIds = () => new Set(memory.listEvents().map(({ id }) => id));
  for (const step of space.steps) {
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
      errors.push({ op: step.op, message: String(error?.message ?? error) });
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

async function runCalls(space) {
  const memory = await StrataGate.open(options(space));
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
  const turn = memory.turn;
  const weights = {
    events: Object.fromEntries(memory.listEvents().map((event) => [event.id, memoryWeightAt(event, turn)])),
    elements: Object.fromEntries(memory.listElements().map((element) => [element.id, memoryWeightAt(element, turn)])),
  };
  await memory.close();
  return { results, weights };
}

const namespaces = {};
for (const space of scenario.namespaces) {
  namespaces[space.namespace] = { stepErrors: await runSteps(space) };
}
// The oracle file is the state every query reads: the reference's searches write lastRetrievedAt afterwards.
copyFileSync(workPath, databasePath);
for (const space of scenario.namespaces) {
  Object.assign(namespaces[space.namespace], await runCalls(space));
}
for (const suffix of ['', '-wal', '-shm']) rmSync(`${workPath}${suffix}`, { force: true });
writeFileSync(answersPath, JSON.stringify({ seed: scenario.seed, node: process.version, namespaces }));
