// The restart scenario shared by the Node and the browser tests: two topics, events published all
// along, a graceful restart (1012 + hint), then kill -9 while publishing; afterwards the client
// must hold every acknowledged event exactly once, in order.
import assert from 'node:assert/strict';
import { Publisher, waitFor, seqOf } from './server.js';

/**
 * @param server a JarServer, started
 * @param client { received(): Promise<{topic: id[]}>, subscribed(): Promise<boolean>, states(): Promise<[string, object][]> }
 */
export async function restartScenario(server, client, topics) {
  const count = async () => Object.values(await client.received()).reduce((n, a) => n + a.length, 0);
  await waitFor(() => client.subscribed(), 10000, 'every topic subscribed');
  const pub = new Publisher(server.url, topics).start();
  try {
    await waitFor(() => pub.total() >= 20, 10000, 'first events acknowledged');

    await server.restartGracefully();
    const afterGraceful = pub.total();
    await waitFor(async () => (await count()) >= afterGraceful + 10, 20000,
      () => `events after the graceful restart (acked ${pub.total()})`);

    await server.restartAfterCrash();
    const afterCrash = pub.total();
    await waitFor(async () => (await count()) >= afterCrash + 10, 20000,
      () => `events after the crash (acked ${pub.total()})`);
  } finally {
    await pub.stop();
  }
  const acked = pub.acked;
  await waitFor(async () => {
    const r = await client.received();
    return topics.every((t) => (r[t] || []).length >= acked[t].length);
  }, 15000, 'every acknowledged event delivered');
  return { acked, received: await client.received(), states: await client.states(), publishFailures: pub.failures };
}

/** Exactly once, in order, nothing else: what the promise says. */
export function assertExactlyOnce({ acked, received }, topics) {
  for (const t of topics) {
    assert.ok(acked[t].length >= 15, `topic ${t}: enough events acknowledged (${acked[t].length})`);
    assert.deepEqual(received[t], acked[t], `topic ${t}: the delivered IDs are exactly the acknowledged ones, in order`);
    // Fresh topics: sequences 1..N with no gap.
    assert.deepEqual(received[t].map(seqOf), acked[t].map((_, i) => i + 1), `topic ${t}: no gap, no duplicate`);
  }
}

/** The graceful restart reached the client as a hinted wait, the crash as an unhinted one. */
export function assertRestartsSeen(states, hintedCode = 1012) {
  const waits = states.filter(([s]) => s === 'waiting').map(([, d]) => d);
  assert.ok(waits.some((d) => d.code === hintedCode && d.hint === true && d.delayMs <= 1000),
    `a ${hintedCode} with a retry hint within the 1 s drain window: ${JSON.stringify(waits)}`);
  assert.ok(waits.some((d) => d.code === 1006 && d.hint === false), `a drop without a close frame (kill -9): ${JSON.stringify(waits)}`);
}
