/**
 * A scripted model on loopback that speaks the Anthropic Messages API (`POST /v1/messages`), so a
 * real Claude Code run headless (`claude -p … --output-format stream-json`) makes real tool calls.
 *
 * The script is a list of tool calls. Each request gets the next call the conversation has not had
 * yet — counted by the `tool_result` blocks it carries, so the agent's retries or side requests
 * never shift the script — and, once every call has its result, a final text answer. Streaming
 * requests get the documented SSE sequence (`message_start`, `content_block_start`,
 * `content_block_delta` with `input_json_delta` / `text_delta`, `content_block_stop`,
 * `message_delta` with the `stop_reason`, `message_stop`); others get the JSON message.
 * https://docs.anthropic.com/en/api/messages-streaming
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type ToolCall = { name: string; input: Record<string, unknown> };
/** A `tool_result` block the agent sent back (what the model was told about a call). */
export type ToolResult = { tool_use_id: string; content: unknown; is_error?: boolean };

export type MessagesApi = {
  /** Base URL for ANTHROPIC_BASE_URL. */
  url: string;
  /** Every request body received, parsed. */
  requests: Array<Record<string, unknown>>;
  /** The tool results received, in order (deduplicated by tool_use_id). */
  toolResults(): ToolResult[];
  close(): Promise<void>;
};

/** Starts the scripted model; `finalText` is its last answer. */
export async function startMessagesApi(calls: ToolCall[], finalText = 'done'): Promise<MessagesApi> {
  const requests: Array<Record<string, unknown>> = [];
  const results = new Map<string, ToolResult>();
  let n = 0;
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      if (req.method !== 'POST' || path !== '/v1/messages') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'not scripted' } }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      requests.push(body);
      let answered = 0;
      for (const m of (body['messages'] as Array<{ role: string; content: unknown }>) ?? [])
        if (m.role === 'user' && Array.isArray(m.content))
          for (const b of m.content as Array<Record<string, unknown>>)
            if (b['type'] === 'tool_result') {
              answered += 1;
              const id = String(b['tool_use_id']);
              if (!results.has(id))
                results.set(id, { tool_use_id: id, content: b['content'], is_error: b['is_error'] as boolean | undefined });
            }
      n += 1;
      const call = calls[answered];
      const id = `msg_${n}`;
      const block = call
        ? { type: 'tool_use', id: `toolu_${answered + 1}_${n}`, name: call.name, input: call.input }
        : { type: 'text', text: finalText };
      const stop = call ? 'tool_use' : 'end_turn';
      const usage = { input_tokens: 10, output_tokens: 5 };
      if (body['stream'] !== true) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id,
            type: 'message',
            role: 'assistant',
            model: body['model'],
            content: [block],
            stop_reason: stop,
            stop_sequence: null,
            usage,
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      const send = (type: string, data: Record<string, unknown>): boolean =>
        res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      send('message_start', {
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model: body['model'],
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage,
        },
      });
      if (call) {
        send('content_block_start', { index: 0, content_block: { ...block, input: {} } });
        send('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.input) } });
      } else {
        send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
        send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: finalText } });
      }
      send('content_block_stop', { index: 0 });
      send('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } });
      send('message_stop', {});
      res.end();
    });
  };
  const server: Server = createServer(handler);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    toolResults: () => [...results.values()],
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/** The installed Claude Code (devDependency @anthropic-ai/claude-code). */
export function claudeBin(repoRoot: string): string {
  return join(repoRoot, 'node_modules', '.bin', 'claude');
}

export type AgentRun = { code: number | null; stdout: string; stderr: string; elapsedMs: number; cwd: string };

/**
 * Runs `claude -p` headless in a fresh working directory with a scratch HOME, the model at `api`,
 * the given settings (a file passed with `--settings`, never /etc) and Bash allowed.
 */
export function runClaude(
  repoRoot: string,
  api: MessagesApi,
  settings: Record<string, unknown>,
  options: { env?: Record<string, string>; timeoutMs?: number; cwd?: string } = {},
): Promise<AgentRun> {
  const scratch = mkdtempSync(join(tmpdir(), 'svc-claude-'));
  const cwd = options.cwd ?? mkdtempSync(join(scratch, 'work-'));
  const settingsFile = join(scratch, 'settings.json');
  writeFileSync(settingsFile, JSON.stringify(settings));
  const env: Record<string, string> = {};
  for (const k of ['PATH', 'LANG', 'TMPDIR']) if (process.env[k]) env[k] = process.env[k] as string;
  Object.assign(env, {
    HOME: scratch,
    ANTHROPIC_BASE_URL: api.url,
    ANTHROPIC_API_KEY: 'sk-test-scripted',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    ...options.env,
  });
  const started = Date.now();
  return new Promise((done, fail) => {
    const child = spawn(
      claudeBin(repoRoot),
      [
        '-p',
        'run the scripted tool calls',
        '--output-format',
        'stream-json',
        '--verbose',
        '--settings',
        settingsFile,
        '--allowedTools',
        'Bash',
      ],
      { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`claude did not finish within ${options.timeoutMs ?? 45_000} ms\n${stdout.slice(-2000)}\n${stderr}`));
    }, options.timeoutMs ?? 45_000);
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, elapsedMs: Date.now() - started, cwd });
    });
  });
}
