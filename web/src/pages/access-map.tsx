/**
 * Access map: the graph of who can reach what (observed vs permitted, drift highlighted), search
 * by name, neighbors on click, attack paths drawn as highlighted paths with their steps, and a
 * table of the same edges. Every choice is in the URL: q, show, view, node, paths, path.
 */
import type { Core } from 'cytoscape';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, listAll } from '../api';
import type { PageProps } from '../pages';
import { setQuery } from '../router';
import { nodesOf, type MapEdge, type PathHop } from '../graph-model';

// The graph library is loaded with this page only: the other pages ship without it.
type GraphModule = typeof import('../graph');
import { ErrorBox, Field, Show, useAsync } from '../ui';

const MAX_EDGES = 100_000;

interface Hop extends PathHop {
  via: string;
  mode: string | null;
  basis: string;
  confidence: string | null;
}
interface PathT {
  length: number;
  confidence: string;
  hops: Hop[];
}
interface FoundPath {
  label: string;
  path: PathT;
}

function filterEdges(edges: MapEdge[], drift: Map<string, string>, show: string): MapEdge[] {
  if (show === 'observed') return edges.filter((e) => e.observed);
  if (show === 'permitted') return edges.filter((e) => e.permitted);
  if (show === 'drift') return edges.filter((e) => drift.has(e.id));
  return edges;
}

export function AccessMapPage({ loc }: PageProps) {
  const q = loc.query.get('q') ?? '';
  const show = loc.query.get('show') ?? 'all';
  const view = loc.query.get('view') === 'table' ? 'table' : 'graph';
  const node = loc.query.get('node') ?? '';
  const [data, reload] = useAsync(async () => {
    const t0 = performance.now();
    const [edges, drift] = await Promise.all([listAll<MapEdge>('/v1/m/accessmap/graph', MAX_EDGES, 1000), listAll<{ id: string; drift: string }>('/v1/m/accessmap/drift', MAX_EDGES, 1000)]);
    performance.measure('svc:map-fetch', { start: t0, end: performance.now() });
    return { edges: edges.items, truncated: edges.truncated, drift: new Map(drift.items.map((d) => [d.id, d.drift])) };
  }, []);
  return (
    <section aria-labelledby="map-title" class="map-page">
      <div class="head">
        <h1 id="map-title">Access map</h1>
        <div class="segmented" role="group" aria-label="View">
          <a href={`?${new URLSearchParams({ ...Object.fromEntries(loc.query), view: 'graph' })}`} aria-current={view === 'graph' ? 'true' : undefined}>
            Graph
          </a>
          <a href={`?${new URLSearchParams({ ...Object.fromEntries(loc.query), view: 'table' })}`} aria-current={view === 'table' ? 'true' : undefined}>
            Table
          </a>
        </div>
      </div>
      <div class="filters" role="search">
        <Field label="Find by name" name="map-q" value={q} onInput={(v) => setQuery({ q: v })} />
        <Field label="Edges" name="map-show" value={show} onInput={(v) => setQuery({ show: v === 'all' ? undefined : v })} options={['all', 'observed', 'permitted', 'drift']} />
      </div>
      <p class="legend" aria-label="Legend">
        <span class="l-both">observed and permitted</span> <span class="l-permitted">permitted, not observed (dashed)</span> <span class="l-observed">observed without a grant (red)</span> <span class="l-drift">drift (orange)</span> <span class="l-path">attack path (pink)</span>
      </p>
      <Show value={data} what="the access map" retry={reload} isEmpty={(d) => d.edges.length === 0} empty="The access map is empty: no observation or grant has been ingested yet.">
        {(d) => {
          const edges = filterEdges(d.edges, d.drift, show);
          return (
            <>
              {d.truncated && <p class="note">Showing the first {d.edges.length} edges.</p>}
              <div class="split">
                {view === 'graph' ? <GraphView edges={edges} drift={d.drift} q={q} node={node} /> : <EdgeTable edges={edges} drift={d.drift} q={q} />}
                {node && <NodePanel id={node} loc={loc} />}
              </div>
            </>
          );
        }}
      </Show>
    </section>
  );
}

function GraphView({ edges, drift, q, node }: { edges: MapEdge[]; drift: Map<string, string>; q: string; node: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const cyRef = useRef<Core | null>(null);
  const modRef = useRef<GraphModule | null>(null);
  const [rendered, setRendered] = useState(false);
  const [error, setError] = useState<Error | undefined>();
  // Bumped once the graph exists, so the effects below run against it.
  const [ready, setReady] = useState(0);
  useEffect(() => {
    let live = true;
    let cy: Core | null = null;
    const t0 = performance.now();
    setRendered(false);
    import('../graph').then(
      (mod) => {
        if (!live || !ref.current) return;
        modRef.current = mod;
        const t1 = performance.now();
        cy = mod.createGraph(ref.current, edges, drift);
        performance.measure('svc:map-build', { start: t1, end: performance.now() });
        cyRef.current = cy;
        cy.on('tap', 'node', (e) => setQuery({ node: e.target.id(), path: undefined, paths: undefined }, false));
        cy.on('tap', (e) => {
          if (e.target === cy) setQuery({ node: undefined, path: undefined, paths: undefined }, false);
        });
        let done = false;
        const drawn = () => {
          if (done || !live) return;
          done = true;
          // The browser test reads these: time from data in hand to the first frame drawn.
          performance.measure('svc:map-render', { start: t0, end: performance.now() });
          performance.mark('svc:map-rendered');
          setRendered(true);
        };
        // The canvas renderer says when it drew; the WebGL one does not, so two animation
        // frames after the build (Cytoscape draws in the first) stand in for it.
        cy.one('render', drawn);
        requestAnimationFrame(() => requestAnimationFrame(drawn));
        setReady((r) => r + 1);
      },
      (e: Error) => live && setError(e),
    );
    return () => {
      live = false;
      cy?.destroy();
      cyRef.current = null;
    };
  }, [edges, drift]);
  useEffect(() => {
    const cy = cyRef.current;
    if (!cy) return;
    cy.nodes().removeClass('match');
    if (q.length >= 2) {
      const needle = q.toLowerCase();
      const hits = cy.nodes().filter((n) => String(n.data('label')).toLowerCase().includes(needle));
      hits.addClass('match');
      if (hits.nonempty()) cy.animate({ fit: { eles: hits, padding: 80 } }, { duration: 200 });
    }
  }, [q, ready]);
  useEffect(() => {
    const cy = cyRef.current;
    const mod = modRef.current;
    if (!cy || !mod) return;
    if (node) mod.focusNode(cy, node);
    else mod.clearFocus(cy);
  }, [node, ready]);
  useEffect(() => {
    const on = (e: Event) => {
      const cy = cyRef.current;
      const mod = modRef.current;
      const hops = (e as CustomEvent<PathHop[] | null>).detail;
      if (!cy || !mod) return;
      if (hops) mod.highlightPath(cy, hops);
      else if (node) mod.focusNode(cy, node);
    };
    window.addEventListener('svc:path', on);
    return () => window.removeEventListener('svc:path', on);
  }, [node, ready]);
  const count = useMemo(() => nodesOf(edges).size, [edges]);
  return (
    <div class="graph-wrap">
      {error && <ErrorBox error={error} />}
      <div ref={ref} class="graph" id="graph" role="img" aria-label={`Access graph: ${count} nodes, ${edges.length} edges. Use the table view for a keyboard-readable list.`} data-rendered={rendered ? 'true' : undefined} data-nodes={count} data-edges={edges.length} />
      <SearchHits edges={edges} q={q} />
    </div>
  );
}

/** The nodes matching the search, as links: the keyboard way into the graph. */
function SearchHits({ edges, q }: { edges: MapEdge[]; q: string }) {
  if (q.length < 2) return null;
  const needle = q.toLowerCase();
  const hits = [...nodesOf(edges).values()].filter((n) => n.name.toLowerCase().includes(needle)).slice(0, 20);
  return (
    <div class="hits" aria-live="polite">
      {hits.length === 0 ? (
        <p>No node named like “{q}”.</p>
      ) : (
        <ul>
          {hits.map((n) => (
            <li key={n.id}>
              <button type="button" class="link" onClick={() => setQuery({ node: n.id, path: undefined, paths: undefined }, false)}>
                {n.name}
              </button>{' '}
              <small>{n.kind}</small>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function EdgeTable({ edges, drift, q }: { edges: MapEdge[]; drift: Map<string, string>; q: string }) {
  const [limit, setLimit] = useState(300);
  const needle = q.toLowerCase();
  const rows = needle ? edges.filter((e) => (e.origin_name ?? '').toLowerCase().includes(needle) || (e.resource_name ?? '').toLowerCase().includes(needle)) : edges;
  return (
    <div class="table-wrap">
      <table>
        <caption>
          {rows.length} edges{rows.length > limit ? `, first ${limit} shown` : ''}
        </caption>
        <thead>
          <tr>
            <th scope="col">Origin</th>
            <th scope="col">Resource</th>
            <th scope="col">Mode</th>
            <th scope="col">Permitted</th>
            <th scope="col">Observed</th>
            <th scope="col">Drift</th>
          </tr>
        </thead>
        <tbody>
          {rows.slice(0, limit).map((e) => (
            <tr key={e.id}>
              <td>
                <a href={`?node=${e.origin_id}`}>{e.origin_name}</a> <small>{e.origin_kind}</small>
              </td>
              <td>
                <a href={`?node=${e.resource_id}`}>{e.resource_name}</a>
              </td>
              <td>{e.mode}</td>
              <td>{e.permitted ? `yes (${e.grant_source ?? '?'})` : 'no'}</td>
              <td>{e.observed ? `${e.observed_count}× (${e.confidence ?? '?'})` : 'no'}</td>
              <td>{drift.get(e.id) ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {rows.length > limit && (
        <button type="button" onClick={() => setLimit(limit + 1000)}>
          Show more
        </button>
      )}
    </div>
  );
}

interface Neighbors {
  node: { id: string; kind: string; name: string | null; ref: string };
  links: Array<{ relation: string; direction: string; node: { id: string; kind: string; name: string | null } }>;
  items: MapEdge[];
}

function NodePanel({ id, loc }: { id: string; loc: PageProps['loc'] }) {
  const [data, reload] = useAsync(() => api<Neighbors>('GET', `/v1/m/accessmap/neighbors?id=${encodeURIComponent(id)}&limit=100`), [id]);
  const kind = loc.query.get('paths') ?? '';
  return (
    <aside class="panel" aria-labelledby="node-title">
      <Show value={data} what="the node" retry={reload}>
        {(n) => (
          <>
            <h2 id="node-title">
              {n.node.name ?? n.node.ref} <small>{n.node.kind}</small>
            </h2>
            <div class="actions">
              {n.node.kind === 'agent' && (
                <>
                  <button type="button" id="paths-escalation" aria-pressed={kind === 'escalation'} onClick={() => setQuery({ paths: 'escalation', path: undefined }, false)}>
                    Escalation paths
                  </button>
                  <button type="button" aria-pressed={kind === 'reachability'} onClick={() => setQuery({ paths: 'reachability', path: undefined }, false)}>
                    Reachable resources
                  </button>
                </>
              )}
              {n.node.kind === 'resource' && (
                <button type="button" aria-pressed={kind === 'exfil'} onClick={() => setQuery({ paths: 'exfil', path: undefined }, false)}>
                  Who can exfiltrate
                </button>
              )}
              <button type="button" onClick={() => setQuery({ node: undefined, paths: undefined, path: undefined }, false)}>
                Close
              </button>
            </div>
            {kind ? (
              <AttackPaths id={id} kind={kind} selected={loc.query.get('path')} />
            ) : (
              <>
                <h3>Neighbors</h3>
                {n.links.length + n.items.length === 0 ? (
                  <p class="state empty">No neighbor.</p>
                ) : (
                  <ul class="neighbors">
                    {n.links.map((l) => (
                      <li key={`${l.relation}-${l.node.id}`}>
                        <a href={`?node=${l.node.id}`}>{l.node.name ?? l.node.id}</a> <small>{l.direction === 'outgoing' ? l.relation : `${l.relation} (incoming)`}</small>
                      </li>
                    ))}
                    {n.items.map((e) => {
                      const other = e.origin_id === id ? { id: e.resource_id, name: e.resource_name } : { id: e.origin_id, name: e.origin_name };
                      return (
                        <li key={e.id}>
                          <a href={`?node=${other.id}`}>{other.name}</a> <small>
                            {e.mode} · {e.permitted ? 'permitted' : 'not permitted'} · {e.observed ? 'observed' : 'not observed'}
                          </small>
                        </li>
                      );
                    })}
                  </ul>
                )}
              </>
            )}
          </>
        )}
      </Show>
    </aside>
  );
}

function AttackPaths({ id, kind, selected }: { id: string; kind: string; selected: string | null }) {
  const [data, reload] = useAsync(async (): Promise<{ paths: FoundPath[]; complete: boolean }> => {
    if (kind === 'escalation') {
      const r = await api<{ targets: Array<{ target: { name: string | null; kind: string }; path: PathT }>; complete: boolean }>('GET', `/v1/m/accessmap/attack-paths/escalation?agent_id=${id}&limit=50`);
      return { paths: r.targets.map((t) => ({ label: `${t.target.kind} ${t.target.name ?? ''}`, path: t.path })), complete: r.complete };
    }
    if (kind === 'reachability') {
      const r = await api<{ items: Array<{ resource: { name: string | null }; mode: string; path: PathT }>; complete: boolean }>('GET', `/v1/m/accessmap/attack-paths/reachability?agent_id=${id}&limit=50`);
      return { paths: r.items.map((t) => ({ label: `${t.resource.name ?? ''} (${t.mode})`, path: t.path })), complete: r.complete };
    }
    const r = await api<{ items: Array<{ principal: { name: string | null; kind: string }; mode: string; path: PathT }>; complete: boolean }>('GET', `/v1/m/accessmap/attack-paths/exfil?resource_id=${id}&limit=50`);
    return { paths: r.items.map((t) => ({ label: `${t.principal.kind} ${t.principal.name ?? ''} (${t.mode})`, path: t.path })), complete: r.complete };
  }, [id, kind]);
  const index = selected === null ? -1 : Number(selected);
  useEffect(() => {
    const hops = data.state === 'ok' && index >= 0 ? data.data.paths[index]?.path.hops ?? null : null;
    window.dispatchEvent(new CustomEvent('svc:path', { detail: hops }));
  }, [data, index]);
  return (
    <div>
      <h3>{kind === 'escalation' ? 'Escalation paths' : kind === 'reachability' ? 'Reachable resources' : 'Exfiltration paths'}</h3>
      <Show value={data} what="attack paths" retry={reload} isEmpty={(d) => d.paths.length === 0} empty="No path found.">
        {(d) => (
          <>
            {!d.complete && <p class="note">The search stopped at its budget: more paths may exist.</p>}
            <ol class="paths">
              {d.paths.map((p, i) => (
                <li key={i}>
                  <button type="button" class="link path-open" aria-expanded={i === index} onClick={() => setQuery({ path: i === index ? undefined : String(i) }, false)}>
                    {p.label}
                  </button>{' '}
                  <small>
                    {p.path.length} {p.path.length === 1 ? "step" : "steps"}, {p.path.confidence} confidence
                  </small>
                  {i === index && (
                    <ol class="steps" aria-label="Steps of this path">
                      {p.path.hops.map((h, j) => (
                        <li key={j}>
                          {h.from.name ?? h.from.id.slice(0, 8)} → <strong>{h.via}</strong>
                          {h.mode ? ` (${h.mode})` : ''} → {h.to.name ?? h.to.id.slice(0, 8)} <small>{h.basis}</small>
                        </li>
                      ))}
                    </ol>
                  )}
                </li>
              ))}
            </ol>
          </>
        )}
      </Show>
    </div>
  );
}

