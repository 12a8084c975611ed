// End-to-end host for the asu MCP gateway: the official TypeScript client
// drives a gateway over streamable HTTP and prints one JSON line per event
// ({"event":"link",...}) and per step ({"step":...}) on stdout. The Go
// test (../e2e_test.go) plays the approver and checks the lines.
//
//   node client.mjs filesystem|everything ENDPOINT DIR   (bearer token in ASU_MCP_TOKEN)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const [scenario, endpoint, dir] = process.argv.slice(2);
const headers = { Authorization: `Bearer ${process.env.ASU_MCP_TOKEN}` };
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');

// host connects a client; with elicitation it declares URL mode, without
// it it asks for log messages instead.
async function host(name, elicitation) {
  const capabilities = elicitation ? { elicitation: { url: {} } } : {};
  const client = new Client({ name, version: '1.0.0' }, { capabilities });
  if (elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      out({ event: 'link', via: 'elicitation', host: name, url: req.params.url, id: req.params.elicitationId });
      return { action: 'accept' };
    });
  }
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => {
    const url = n.params.data && n.params.data.url;
    if (url) out({ event: 'link', via: 'log', host: name, url });
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers } }));
  if (!elicitation) await client.setLoggingLevel('info');
  return client;
}

async function step(name, client, tool, args, options = {}) {
  let progress = 0;
  try {
    const res = await client.callTool({ name: tool, arguments: args }, CallToolResultSchema, {
      ...options,
      onprogress: () => { progress++; },
    });
    const text = res.content.filter((c) => c.type === 'text').map((c) => c.text).join('');
    out({ step: name, isError: !!res.isError, text, progress });
  } catch (e) {
    out({ step: name, error: String(e.code ?? ''), message: String(e.message), progress });
  }
}

const main = async () => {
  const a = await host('elicitation-host', true);
  const tools = await a.listTools();
  out({ step: 'list', tools: tools.tools.map((t) => t.name).sort() });
  if (scenario === 'filesystem') {
    await step('read', a, 'read_text_file', { path: `${dir}/hello.txt` });
    await step('write approved', a, 'write_file', { path: `${dir}/approved.txt`, content: 'approved content' });
    await step('write changed', a, 'write_file', { path: `${dir}/changed.txt`, content: 'approved content' });
    await step('write denied', a, 'write_file', { path: `${dir}/denied.txt`, content: 'x' });
    await step('write timeout', a, 'write_file', { path: `${dir}/timeout.txt`, content: 'x' }, { timeout: 1500 });
    const b = await host('progress-host', false);
    await step('write progress', b, 'write_file', { path: `${dir}/progress.txt`, content: 'waited' },
      { timeout: 1000, resetTimeoutOnProgress: true });
    await b.close();
  } else {
    await step('echo', a, 'echo', { message: 'hello' });
    await step('get-env', a, 'get-env', {});
    await step('sum', a, 'get-sum', { a: 2, b: 3 });
  }
  await a.close();
};

main().then(() => process.exit(0), (e) => { out({ fatal: String(e && e.stack || e) }); process.exit(1); });
