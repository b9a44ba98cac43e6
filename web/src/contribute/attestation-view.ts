/**
 * The end of the journey: an attestation listing each circuit's accepted contribution hash,
 * to copy and publish, and the coordinator's signed receipts to download and keep: of each accepted
 * contribution, and of each step through the queue that has one (joins, refusals, removals). The
 * receipts file is what the public page's receipt check and `ceremony verify-receipt` read.
 */
import type { ApiClient } from '../../../client/api-client.ts';
import type { CeremonyView, MeView, SignedReceipt } from '../api/api-types.ts';
import { copyButton, downloadText, h } from '../ui/element.ts';
import { formatHashBlock } from '../ui/format-units.ts';
import { errorNotice } from '../sign-in/sign-in-panel.ts';

function attestationText(me: MeView, ceremony: Pick<CeremonyView, 'id' | 'title'>, origin: string): string {
  const lines = [
    `I contributed to the Groth16 Phase 2 ceremony "${ceremony.title ?? ceremony.id}" (${ceremony.id}) at ${origin}`,
    `as ${me.principal.displayName}. My contribution hashes, one per circuit:`,
    '',
  ];
  for (const progress of me.status.circuits) {
    if (progress.state !== 'accepted') continue;
    lines.push(`${progress.circuit} #${progress.index}:`, formatHashBlock(progress.contributionHash), '');
  }
  return lines.join('\n').trimEnd();
}

/** Saves the signed receipts (acceptances, queue steps) as the receipts file; failures go to `feedback`. */
async function downloadReceipts(api: ApiClient, ceremony: CeremonyView, feedback: HTMLElement): Promise<void> {
  try {
    const { receipts, steps } = await api.get<{ receipts: SignedReceipt[]; steps?: SignedReceipt[] }>(
      '/api/me/receipts',
    );
    const file = {
      ceremony: ceremony.id,
      coordinator: location.origin,
      receiptPublicKey: ceremony.receiptPublicKey,
      signature: 'Ed25519 over each receipt body (UTF-8)',
      receipts,
      steps: steps ?? [],
    };
    downloadText(`receipts-${ceremony.id}.json`, `${JSON.stringify(file, null, 2)}\n`);
  } catch (error) {
    feedback.replaceChildren(errorNotice(error));
  }
}

/**
 * The receipts downloadable at any time: those of joins, refusals and removals are there before
 * any acceptance.
 */
export function renderReceiptsSoFar(api: ApiClient, ceremony: CeremonyView): HTMLElement {
  const feedback = h('div', { 'aria-live': 'polite' });
  return h(
    'p',
    { class: 'hint' },
    'Your signed receipts so far (joins, refusals, removals and accepted contributions): ',
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        id: 'download-receipts-so-far',
        onclick: () => void downloadReceipts(api, ceremony, feedback),
      },
      'Download',
    ),
    feedback,
  );
}

export function renderAttestation(api: ApiClient, me: MeView, ceremony: CeremonyView): HTMLElement {
  const text = attestationText(me, ceremony, location.origin);
  const feedback = h('div', { 'aria-live': 'polite' });
  return h(
    'section',
    { class: 'card', id: 'attestation', 'aria-labelledby': 'attestation-title' },
    h('h2', { id: 'attestation-title' }, 'Thank you: every contribution was accepted'),
    h(
      'p',
      {},
      'Your randomness is now part of every proving key, and it is gone: it ' +
        'was used inside this page and dropped after each circuit. Publish the ' +
        'attestation below (a gist, a post) so anyone can check your hashes ' +
        'against the public transcript; keep the signed receipts as the ' +
        'coordinator’s proof that it accepted them.',
    ),
    h('pre', { id: 'attestation-text', tabindex: 0, 'aria-label': 'Attestation' }, text),
    h(
      'div',
      { class: 'actions' },
      copyButton('Copy attestation', () => text, { id: 'copy-attestation' }),
      h(
        'button',
        { type: 'button', id: 'download-receipts', onclick: () => void downloadReceipts(api, ceremony, feedback) },
        'Download signed receipts',
      ),
    ),
    h(
      'p',
      { class: 'hint', id: 'receipts-how-to-check' },
      'Keep the receipts file. Drop it on the ',
      h('a', { href: '/ceremony/#receipt-check' }, 'public ceremony page'),
      ' at any time, and again once the ceremony is finalised, to check that ' +
        'the keys descend from your contributions, ' +
        'or run ',
      h('code', {}, `ceremony verify-receipt receipts-${ceremony.id}.json DIR`),
      ' on a published copy of the ceremony.',
    ),
    feedback,
  );
}
