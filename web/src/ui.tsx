/** Shared pieces of every page: loading, empty and error states, dialogs, fields, the data hook. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';

export type Async<T> = { state: 'loading' } | { state: 'error'; error: Error } | { state: 'ok'; data: T };

/** Load `fn` whenever `deps` change; `reload` runs it again. Stale answers are dropped. */
export function useAsync<T>(fn: () => Promise<T>, deps: unknown[]): [Async<T>, () => void] {
  const [value, setValue] = useState<Async<T>>({ state: 'loading' });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setValue({ state: 'loading' });
    fn().then(
      (data) => live && setValue({ state: 'ok', data }),
      (error: Error) => live && setValue({ state: 'error', error }),
    );
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  return [value, useCallback(() => setTick((t) => t + 1), [])];
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="state loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function ErrorBox({ error, retry }: { error: Error; retry?: () => void }) {
  const code = error instanceof ApiError ? error.code : 'error';
  return (
    <div class="state error" role="alert">
      <strong>{code === 'forbidden' ? 'Not allowed' : 'Something went wrong'}</strong> <code>{code}</code>: {error.message}
      {retry && (
        <button type="button" onClick={retry}>
          Retry
        </button>
      )}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state empty">{children}</p>;
}

/** Render an Async value: loading, error, empty (when `isEmpty`), or the content. */
export function Show<T>(props: { value: Async<T>; what: string; retry?: () => void; isEmpty?: (d: T) => boolean; empty?: ComponentChildren; children: (d: T) => ComponentChildren }) {
  const v = props.value;
  if (v.state === 'loading') return <Loading what={props.what} />;
  if (v.state === 'error') return <ErrorBox error={v.error} retry={props.retry} />;
  if (props.isEmpty?.(v.data)) return <Empty>{props.empty ?? `No ${props.what} yet.`}</Empty>;
  return <>{props.children(v.data)}</>;
}

/** A modal dialog (native <dialog>: focus is trapped, Escape closes it). */
export function Dialog(props: { title: string; open: boolean; onClose: () => void; children: ComponentChildren; id?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog ref={ref} id={props.id} aria-labelledby={`${props.id ?? 'dialog'}-title`} onClose={props.onClose}>
      <h2 id={`${props.id ?? 'dialog'}-title`}>{props.title}</h2>
      {props.open && props.children}
    </dialog>
  );
}

/** Ask before a destructive action; the action's error shows inside the dialog. */
export function ConfirmDialog(props: { title: string; open: boolean; onClose: () => void; onConfirm: () => Promise<void>; confirmLabel: string; children: ComponentChildren }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | undefined>();
  const confirm = async () => {
    setBusy(true);
    setError(undefined);
    try {
      await props.onConfirm();
      props.onClose();
    } catch (e) {
      setError(e as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={props.title} open={props.open} onClose={props.onClose} id="confirm">
      <div>{props.children}</div>
      {error && <ErrorBox error={error} />}
      <div class="actions">
        <button type="button" class="danger" disabled={busy} onClick={confirm}>
          {props.confirmLabel}
        </button>
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}

/** A labelled input. */
export function Field(props: { label: string; name: string; value: string; onInput: (v: string) => void; type?: string; required?: boolean; autocomplete?: string; hint?: string; options?: string[] }) {
  const id = `f-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.options ? (
        <select id={id} name={props.name} value={props.value} onChange={(e) => props.onInput((e.target as HTMLSelectElement).value)}>
          {props.options.map((o) => (
            <option value={o} key={o}>
              {o || '(any)'}
            </option>
          ))}
        </select>
      ) : (
        <input id={id} name={props.name} type={props.type ?? 'text'} value={props.value} required={props.required} autocomplete={props.autocomplete} onInput={(e) => props.onInput((e.target as HTMLInputElement).value)} />
      )}
      {props.hint && <small>{props.hint}</small>}
    </div>
  );
}

/** Run a form action: busy flag, error kept for display. */
export function useAction(): { busy: boolean; error: Error | undefined; run: (fn: () => Promise<void>) => Promise<void>; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | undefined>();
  const run = async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await fn();
    } catch (e) {
      setError(e as Error);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, clear: () => setError(undefined) };
}

export const fmtTime = (t: string | null | undefined): string => (t ? t.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '—');
