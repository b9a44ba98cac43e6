import assert from 'node:assert/strict';
import test from 'node:test';
import { holdsPollForTurn } from '../../client/queue-poll-pace.ts';
import { standbyDepth } from '../../core/queue-log/turn-order.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';

test("every entry the defaults' standby offer can reach holds its poll, so none is overtaken for a paced poll", () => {
  const { takeTurnMs, takePriorityMs, standbyStepMs } = loadServerConfig({}).lobby;
  // The deepest the offer gets: the last millisecond of the time to take the turn.
  const reach = standbyDepth(0, takeTurnMs - 1, { takePriorityMs, standbyStepMs });
  assert.ok(reach > 8, `the defaults reach ${reach} entries behind the grantee`);
  for (let position = 1; position <= reach; position++) assert.ok(holdsPollForTurn(position), `position ${position}`);
});
