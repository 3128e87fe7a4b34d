/**
 * Questions through the client: an acknowledgement blocked only on a user-only dependency asks
 * the user with a form when the client can answer forms. Accepted, the answer is recorded as
 * context on a new node and the unblocked step comes back; declined or cancelled, the blocked
 * answer stands; a client without the capability, an automated autonomy and a credential are
 * never asked. Over a 2025 connection (the SDK sends `elicitation/create`) and a 2026-07-28 one
 * (an `input_required` answer the client fulfils and retries).
 */
import assert from "node:assert/strict";
import { Client as ClientV1 } from "npm:@modelcontextprotocol/sdk@1.32.2/client/index.js";
import { StdioClientTransport as StdioClientTransportV1 } from "npm:@modelcontextprotocol/sdk@1.32.2/client/stdio.js";
import { ElicitRequestSchema } from "npm:@modelcontextprotocol/sdk@1.32.2/types.js";
import { openWaymark } from "../../mod.ts";
import { parseRunLabel } from "../../engine/model/ids.ts";
import { serverParams } from "../helpers/server.ts";
import { ModernClient, taskHome } from "../helpers/tasks.ts";
import { placeOf } from "../helpers/answers.ts";

// deno-lint-ignore no-explicit-any
type Any = Record<string, any>;

interface Asking {
  client: ClientV1;
  asked: Any[];
  reply: { value: Any };
  call(name: string, args: Any): Promise<Any>;
}

async function v1(home: string, options: { forms: boolean }): Promise<Asking> {
  const client = new ClientV1(
    { name: "waymark-test-elicit", version: "1.0.0" },
    { capabilities: options.forms ? { elicitation: {} } : {} },
  );
  const asked: Any[] = [];
  const reply = { value: { action: "accept", content: { target: "prod" } } as Any };
  if (options.forms) {
    client.setRequestHandler(ElicitRequestSchema, (request: Any) => {
      asked.push(request.params);
      return reply.value as never;
    });
  }
  await client.connect(
    new StdioClientTransportV1(serverParams(home)),
  );
  return {
    client,
    asked,
    reply,
    call: async (name, args) => {
      const result = await client.callTool({ name, arguments: args }) as Any;
      if (result.isError) throw new Error(result.content[0].text);
      return result.structuredContent;
    },
  };
}

/** Starts `workflowId` and acknowledges steps until `stepId` is pending. */
async function reach(
  at: Pick<Asking, "call">,
  workflowId: string,
  options: { stepId: string; preferences?: Any },
): Promise<Any> {
  let r = await at.call("start_workflow", { workflowId, preferences: options.preferences });
  while (r.pending.stepId !== options.stepId) {
    r = await at.call("continue_workflow", ackOf(r));
  }
  return r;
}

// notes are required on these steps (WorkRail parity): each ack carries some
const ackOf = (r: Any) => ({
  stateToken: r.stateToken,
  ackToken: r.ackToken,
  output: { notesMarkdown: `Did ${r.pending?.stepId}.` },
});

Deno.test("2025: the user is asked; accepted, declined, cancelled; never without forms, automated or for credentials", async () => {
  const home = await taskHome();
  const asking = await v1(home.home, { forms: true });
  const silent = await v1(home.home, { forms: false });
  try {
    const decide = await reach(asking, "user.deploy", { stepId: "decide" });
    const advanced = await asking.call("continue_workflow", ackOf(decide));
    assert.equal(asking.asked.length, 1);
    const form = asking.asked[0]!;
    assert.deepEqual(form.requestedSchema.required, ["target"]);
    assert.equal(form.requestedSchema.properties.target.type, "string");
    assert.match(form.requestedSchema.properties.target.description, /Where should it deploy/);
    assert.equal(advanced.kind, "ok", "accepted: the unblocked step comes back");
    assert.equal(advanced.pending.stepId, "round");
    const waymark = await openWaymark({ home: home.home, dbUrl: home.dbUrl });
    try {
      const runId = parseRunLabel(placeOf(advanced).runId)!;
      const node = await waymark.store.getNode(runId, placeOf(advanced).nodeId);
      assert.equal(node!.context.target, "prod", "the answer is context, as if the agent sent it");
      const branch = await waymark.store.getBranchSteps(runId, node!.nodeId, 20);
      assert.equal(branch.at(-2)!.nodeKind, "checkpoint", "recorded on a node of its own");
    } finally {
      await waymark.close();
    }

    for (const action of ["decline", "cancel"]) {
      asking.reply.value = { action };
      const again = await reach(asking, "user.deploy", { stepId: "decide" });
      const asked: number = asking.asked.length;
      const blocked = await asking.call("continue_workflow", ackOf(again));
      assert.equal(asking.asked.length, asked + 1, `asked before a ${action}`);
      assert.equal(blocked.kind, "blocked", `${action}: the blocked answer stands`);
      assert.deepEqual(blocked.blockers.map((b: Any) => b.code), ["USER_ONLY_DEPENDENCY"]);
    }

    const before = asking.asked.length;
    const auto = await reach(asking, "user.deploy", {
      stepId: "decide",
      preferences: { autonomy: "full_auto_stop_on_user_deps" },
    });
    assert.equal((await asking.call("continue_workflow", ackOf(auto))).kind, "blocked");
    const secret = await reach(asking, "user.secrets", { stepId: "connect" });
    assert.equal((await asking.call("continue_workflow", ackOf(secret))).kind, "blocked");
    assert.equal(asking.asked.length, before, "never asked in full_auto_* nor for a credential");

    const plain = await reach(silent, "user.deploy", { stepId: "decide" });
    assert.equal((await silent.call("continue_workflow", ackOf(plain))).kind, "blocked");
  } finally {
    await asking.client.close();
    await silent.client.close();
    await home.cleanup();
  }
});

Deno.test("2026-07-28: the question is an input_required answer; the retry carries the answer", async () => {
  const home = await taskHome();
  const client = new ModernClient(home.home);
  const forms = { elicitation: {} };
  try {
    let r = (await client.call("start_workflow", { workflowId: "user.deploy" }, {
      capabilities: forms,
    })).structuredContent;
    r = (await client.call("continue_workflow", ackOf(r), { capabilities: forms }))
      .structuredContent;
    const asked = await client.call("continue_workflow", ackOf(r), { capabilities: forms });
    assert.equal(asked.resultType, "input_required");
    assert.equal(asked.inputRequests.user_input.method, "elicitation/create");
    const declined = await client.call("continue_workflow", ackOf(r), {
      capabilities: forms,
      params: { inputResponses: { user_input: { action: "decline" } } },
    });
    assert.equal(declined.structuredContent.kind, "blocked");
    const again = await client.call("continue_workflow", { stateToken: r.stateToken }, {
      capabilities: forms,
    });
    const fresh = again.structuredContent;
    const accepted = await client.call("continue_workflow", ackOf(fresh), {
      capabilities: forms,
      params: { inputResponses: { user_input: { action: "accept", content: { target: "eu" } } } },
    });
    assert.equal(accepted.structuredContent.kind, "ok");
    assert.equal(accepted.structuredContent.pending.stepId, "round");
    const withoutForms = await client.call("start_workflow", { workflowId: "user.deploy" }, {
      capabilities: {},
    });
    const next = (await client.call("continue_workflow", ackOf(withoutForms.structuredContent), {
      capabilities: {},
    })).structuredContent;
    const plain = await client.call("continue_workflow", ackOf(next), { capabilities: {} });
    assert.equal(plain.resultType, "complete");
    assert.equal(plain.structuredContent.kind, "blocked", "no forms: never asked");
  } finally {
    await client.close();
    await home.cleanup();
  }
});
