// Hostile requests the soak test mixes into its load, beside the events it counts: JSON nested thousands deep on
// each entry point that reads JSON from outside (the admin API's console messages and HTTP registration, the
// QQ Bot webhook, signed as the platform signs), and wrong admin tokens at a high rate from another client
// address. Each is answered with its refusal; none may cost the operator's own requests an answer.
import { ADMIN_TOKEN, type RunningHost } from '@host/e2e-support';
import type { WebhookSigner } from '@host/host-qqbot/testing';
import { Agent, request } from 'node:http';

const DEPTH = 6000;
const deep = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;

/** The address the guesser sends from: another loopback address than the operator's 127.0.0.1 (Linux routes 127/8 to lo). */
export const GUESSER_ADDRESS = '127.0.0.2';

export interface HostileReport {
  /** "<what> <status> <code>" and how often it was answered so. */
  answers: Record<string, number>;
  /** Requests that got no answer at all (a connection error). */
  unanswered: number;
}

interface Answer {
  status: number;
  code: string;
}

function send(
  host: RunningHost,
  agent: Agent,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${host.url}${path}`,
      { method, agent, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          let code = '-';
          try {
            code = (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? '-';
          } catch {
            // not JSON: counted under "-"
          }
          resolve({ status: res.statusCode ?? 0, code });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Sends the hostile requests in rounds until `stop()` answers true: each round a console message, an HTTP
 * registration and a signed webhook nested DEPTH deep with the right credentials, and `guessesPerRound` wrong
 * admin tokens (as bearer tokens and at sign-in, alternately) from GUESSER_ADDRESS.
 */
export async function sendHostileTraffic(
  host: RunningHost,
  signer: WebhookSigner,
  options: { roundMilliseconds: number; guessesPerRound: number; stop: () => boolean },
): Promise<HostileReport> {
  const report: HostileReport = { answers: {}, unanswered: 0 };
  const operator = new Agent({ keepAlive: true, maxSockets: 4 });
  const guesser = new Agent({ keepAlive: true, maxSockets: 8, localAddress: GUESSER_ADDRESS });
  const note = async (what: string, answer: Promise<Answer | { status: number; body: unknown }>) => {
    try {
      const a = await answer;
      const code = 'code' in a ? a.code : ((a.body as { error?: { code?: string } } | undefined)?.error?.code ?? '-');
      const key = `${what} ${a.status} ${code}`;
      report.answers[key] = (report.answers[key] ?? 0) + 1;
    } catch {
      report.unanswered++;
    }
  };
  const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };
  let round = 0;
  try {
    while (!options.stop()) {
      const started = Date.now();
      const work: Promise<void>[] = [
        note(
          'deep console message',
          send(
            host,
            operator,
            'POST',
            '/api/console/messages',
            bearer,
            `{"conversation":{"type":"group","id":"soak-deep"},"sender":{"id":"u1"},"text":"deep","x":${deep}}`,
          ),
        ),
        note(
          'deep HTTP registration',
          send(host, operator, 'POST', '/api/plugins/http', bearer, `{"baseUrl":"http://127.0.0.1:9","x":${deep}}`),
        ),
        note(
          'deep webhook',
          signer.post(
            JSON.stringify(signer.groupAtMessage({ groupOpenId: 'G_SOAK', memberOpenId: 'M_SOAK', content: ' deep' })).replace(
              /}}$/,
              `,"x":${deep}}}`,
            ),
          ),
        ),
      ];
      for (let i = 0; i < options.guessesPerRound; i++) {
        const guess = `wrong-token-${round}-${i}`;
        work.push(
          i % 2 === 0
            ? note('wrong bearer token', send(host, guesser, 'GET', '/api/plugins', { authorization: `Bearer ${guess}` }))
            : note('wrong sign-in token', send(host, guesser, 'POST', '/api/session', {}, JSON.stringify({ token: guess }))),
        );
      }
      await Promise.all(work);
      round++;
      const wait = options.roundMilliseconds - (Date.now() - started);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  } finally {
    operator.destroy();
    guesser.destroy();
  }
  return report;
}
