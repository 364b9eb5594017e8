// Plays an agent running the TypeScript reference (schema 5) on a memory file, through its public API.
//
//   TZ=UTC node reference_agent.mjs <reference checkout with dist/> <command> <file> <namespace> [arguments]
//
// Commands (each prints one JSON object on stdout):
//   write <turns>            a fresh file: <turns> turns sealed in blocks of 2 (default summaries), one event per
//                            block citing its first message, a lift of the first block
//   report [query...]        open the file as the agent does (writable), and report what it sees: revision, turn,
//                            every event's status, pin, supersession and weight, every block's pointer and
//                            decayed level; then each query's searchEvents hits (a search writes, so it is last)
//   report-read-only         the same report through the reference's read-only storage (no searches)
//   append <count> <prefix>  append <count> turns; on the reference's StorageConflictError reopen the file and
//                            retry that turn; reports turns stored and conflicts seen
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [referenceDir, command, database, namespace, ...rest] = process.argv.slice(2);
const { StrataGate, StorageConflictError, memoryWeightAt } = await import(
  pathToFileURL(join(referenceDir, 'dist', 'index.js')).href
);
const { SqliteStorage } = await import(pathToFileURL(join(referenceDir, 'dist', 'sqlite.js')).href);

let clock = Date.parse('2026-04-01T09:00:00Z');
const open = (options = {}) =>
  StrataGate.open({ database, namespace, now: () => new Date((clock += 60_000)), ...options });

function describe(memory) {
  const levels = new Map(memory.getBlockContext().map((entry) => [entry.id, entry.level]));
  return {
    revision: memory.storageRevision,
    turn: memory.turn,
    events: memory.listEvents().map((event) => ({
      id: event.id,
      status: event.status,
      pinned: event.weight.pinned,
      supersededBy: event.supersededBy,
      weight: memoryWeightAt(event, memory.turn),
    })),
    blocks: memory.listBlocks().map((block) => ({
      id: block.id,
      anchorLevel: block.pointerAnchorLevel,
      anchorTurn: block.pointerAnchorTurn,
      lastLiftedAt: block.lastLiftedAt,
      level: levels.get(block.id),
    })),
  };
}

if (command === 'write') {
  let counter = 0;
  const memory = await open({ blockTurnSize: 2, idFactory: (prefix) => `${prefix}_${++counter}` });
  for (let turn = 1; turn <= Number(rest[0]); turn += 1) {
    const { sealedBlock } = await memory.appendTurn({ user: `question ${turn} about the atlas`, assistant: `answer ${turn}` });
    if (sealedBlock) {
      await memory.addEvent({
        title: `Decision ${sealedBlock.sequence} on the atlas`,
        summary: `What block ${sealedBlock.sequence} settled`,
        sourceBlockId: sealedBlock.id,
        sourceMessageIds: [sealedBlock.l5Raw[0].id],
      });
    }
  }
  await memory.expandBlock(memory.listBlocks()[0].id, 'raw');
  console.log(JSON.stringify(describe(memory)));
  await memory.close();
} else if (command === 'report') {
  const memory = await open();
  const report = describe(memory);
  report.searches = {};
  for (const query of rest) {
    report.searches[query] = (await memory.searchEvents(query, { limit: 50 })).map((hit) => hit.event?.id ?? hit.id);
  }
  console.log(JSON.stringify(report));
  await memory.close();
} else if (command === 'report-read-only') {
  const storage = new SqliteStorage({ filename: database, readonly: true });
  const memory = await StrataGate.openWithStorage({ storage, namespace });
  console.log(JSON.stringify(describe(memory)));
  await memory.close();
} else if (command === 'append') {
  const [count, prefix] = [Number(rest[0]), rest[1]];
  let memory = await open();
  let conflicts = 0;
  for (let turn = 1; turn <= count; ) {
    try {
      // The receipt makes a retry safe when the turn was stored and a later step (sealing) lost the race.
      await memory.appendTurn({
        user: `${prefix} question ${turn}`,
        assistant: `${prefix} answer ${turn}`,
        receiptId: `${prefix}-${turn}`,
      });
      turn += 1;
    } catch (error) {
      if (!(error instanceof StorageConflictError)) throw error;
      conflicts += 1;
      await memory.close();
      memory = await open();
    }
  }
  console.log(JSON.stringify({ stored: count, conflicts, revision: memory.storageRevision }));
  await memory.close();
} else {
  throw new Error(`unknown command ${command}`);
}
