/**
 * Step-up in place: when an action answers 403 `step_up_required`, this dialog asks for the
 * security key (registering one first when the user has none), then the action is retried.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, onStepUp } from './api';
import { useApp } from './app-context';
import { Dialog, ErrorBox } from './ui';
import { registerAuthenticator, stepUp } from './webauthn';

export function StepUpDialog() {
  const app = useApp();
  const [pending, setPending] = useState<((ok: boolean) => void) | undefined>();
  const [busy, setBusy] = useState(false);
  const [needsKey, setNeedsKey] = useState(false);
  const [error, setError] = useState<Error | undefined>();

  useEffect(() => {
    onStepUp(
      () =>
        new Promise<boolean>((resolve) => {
          setError(undefined);
          setNeedsKey(false);
          setPending(() => resolve);
        }),
    );
  }, []);

  const finish = (ok: boolean) => {
    pending?.(ok);
    setPending(undefined);
  };
  const go = async () => {
    setBusy(true);
    setError(undefined);
    try {
      if (needsKey) await registerAuthenticator('security key');
      await stepUp();
      await app.refreshMe();
      finish(true);
    } catch (e) {
      if (e instanceof ApiError && e.code === 'conflict') setNeedsKey(true);
      else setError(e as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title="Confirm with your security key" open={pending !== undefined} onClose={() => finish(false)} id="step-up">
      <p>This action needs a step-up to assurance level 3: confirm with a WebAuthn security key. It lasts 15 minutes.</p>
      {needsKey && <p class="note">You have no security key registered yet. Register one now; it is then used for the step-up.</p>}
      {error && <ErrorBox error={error} />}
      <div class="actions">
        <button type="button" class="primary" id="step-up-go" disabled={busy} onClick={() => void go()}>
          {needsKey ? 'Register a key and continue' : 'Use security key'}
        </button>
        <button type="button" onClick={() => finish(false)}>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}
