/**
 * A small history router: the URL is the state (path and filters in the query string), so every
 * view can be bookmarked and shared. Links are plain <a href> that the app intercepts.
 */
import { useEffect, useState } from 'preact/hooks';

export interface Location {
  path: string;
  query: URLSearchParams;
}

const EVENT = 'svc:navigate';

function current(): Location {
  return { path: window.location.pathname, query: new URLSearchParams(window.location.search) };
}

/** Go to `to` (path and query); `replace` keeps the history entry (filter typing). */
export function navigate(to: string, replace = false): void {
  if (to === window.location.pathname + window.location.search) return;
  if (replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  window.dispatchEvent(new Event(EVENT));
}

/** Set or clear query parameters of the current URL. */
export function setQuery(updates: Record<string, string | undefined | null>, replace = true): void {
  const q = new URLSearchParams(window.location.search);
  for (const [k, v] of Object.entries(updates)) {
    if (v === undefined || v === null || v === '') q.delete(k);
    else q.set(k, v);
  }
  const s = q.toString();
  navigate(window.location.pathname + (s ? `?${s}` : ''), replace);
}

/** The current location, re-rendering on every change. */
export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const on = () => setLoc(current());
    window.addEventListener('popstate', on);
    window.addEventListener(EVENT, on);
    return () => {
      window.removeEventListener('popstate', on);
      window.removeEventListener(EVENT, on);
    };
  }, []);
  return loc;
}

/** Same-origin link clicks become history navigation (modifier clicks keep the browser's way). */
export function interceptLinks(): void {
  document.addEventListener('click', (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element).closest('a');
    if (!a || a.target || a.hasAttribute('download')) return;
    const url = new URL(a.href, window.location.href);
    if (url.origin !== window.location.origin || url.pathname.startsWith('/v1/')) return;
    e.preventDefault();
    navigate(url.pathname + url.search);
  });
}
