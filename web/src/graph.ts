/**
 * The access-map canvas (Cytoscape.js, canvas renderer): nodes by kind, edges styled by what is
 * known of them (observed, permitted, both), drift and attack paths highlighted. Large estates
 * get a grid layout per kind and cheaper viewport rendering so that panning stays smooth.
 */
import cytoscape, { type Core, type ElementDefinition } from 'cytoscape';
import { edgeClass, nodesOf, type MapEdge, type MapNode, type PathHop } from './graph-model';

const KIND_ORDER = ['identity', 'agent', 'session', 'resource'];
const BIG = 1500;

/** A grid per kind, blocks side by side: linear time, readable enough for thousands of nodes. */
function gridPositions(nodes: MapNode[]): Map<string, { x: number; y: number }> {
  const byKind = new Map<string, MapNode[]>();
  for (const n of nodes) {
    const list = byKind.get(n.kind);
    if (list) list.push(n);
    else byKind.set(n.kind, [n]);
  }
  const pos = new Map<string, { x: number; y: number }>();
  let x0 = 0;
  for (const kind of KIND_ORDER) {
    const list = byKind.get(kind) ?? [];
    const cols = Math.max(1, Math.ceil(Math.sqrt(list.length / 2)));
    list.forEach((n, i) => pos.set(n.id, { x: x0 + (i % cols) * 60, y: Math.floor(i / cols) * 40 }));
    x0 += cols * 60 + 300;
  }
  return pos;
}

/**
 * Cytoscape adds a <style> element on first use unless an element with this id exists; the CSP
 * refuses inline style, so a placeholder takes its place and styles.css carries its one rule.
 */
function claimStylesheetSlot(): void {
  const id = '__________cytoscape_stylesheet';
  if (document.getElementById(id)) return;
  const slot = document.createElement('meta');
  slot.id = id;
  document.head.append(slot);
}

export function createGraph(container: HTMLElement, edges: MapEdge[], drift: Map<string, string>): Core {
  claimStylesheetSlot();
  const nodes = [...nodesOf(edges).values()];
  const big = nodes.length > BIG;
  const positions = big ? gridPositions(nodes) : undefined;
  const elements: ElementDefinition[] = [
    ...nodes.map((n) => ({ group: 'nodes' as const, data: { id: n.id, label: n.name, kind: n.kind }, ...(positions ? { position: positions.get(n.id) } : {}) })),
    ...edges.map((e) => ({ group: 'edges' as const, data: { id: e.id, source: e.origin_id, target: e.resource_id, mode: e.mode }, classes: edgeClass(e, drift) })),
  ];
  const cy = cytoscape({
    container,
    elements,
    layout: big ? { name: 'preset' } : { name: 'cose', animate: false, randomize: false, nodeRepulsion: () => 40000, idealEdgeLength: () => 110, numIter: 600 },
    minZoom: 0.02,
    maxZoom: 4,
    pixelRatio: 1,
    motionBlur: false,
    hideEdgesOnViewport: big,
    textureOnViewport: big,
    boxSelectionEnabled: false,
    style: [
      // Thousands of labels cost a text measurement each: a large estate labels only what is
      // found, selected or on a path.
      { selector: 'node', style: { ...(big ? {} : { label: 'data(label)' }), 'font-size': 10, color: '#1b2733', 'text-valign': 'bottom', 'text-margin-y': 3, width: 18, height: 18, 'background-color': '#5b6b7d', 'min-zoomed-font-size': 6, 'text-background-color': '#ffffff', 'text-background-opacity': 0.7 } },
      { selector: 'node[kind = "agent"]', style: { 'background-color': '#1f5fbf', shape: 'round-rectangle', width: 24, height: 24 } },
      { selector: 'node[kind = "session"]', style: { 'background-color': '#6f8fb8', shape: 'ellipse', width: 12, height: 12 } },
      { selector: 'node[kind = "identity"]', style: { 'background-color': '#7a3fb0', shape: 'diamond', width: 22, height: 22 } },
      { selector: 'node[kind = "resource"]', style: { 'background-color': '#2f7d4f', shape: 'hexagon', width: 22, height: 22 } },
      { selector: 'edge', style: { width: 1.5, 'curve-style': big ? 'haystack' : 'bezier', 'line-color': '#8a96a3', 'target-arrow-shape': big ? 'none' : 'triangle', 'target-arrow-color': '#8a96a3', 'arrow-scale': 0.7, opacity: 0.8 } },
      // Permitted but never observed: dashed. Observed without a grant: solid red.
      { selector: 'edge.permitted-only', style: { 'line-style': 'dashed', 'line-color': '#6d8cc7', 'target-arrow-color': '#6d8cc7' } },
      { selector: 'edge.observed-only', style: { 'line-color': '#c0392b', 'target-arrow-color': '#c0392b', width: 2.5 } },
      { selector: 'edge.drift', style: { width: 3, 'line-color': '#d35400', 'target-arrow-color': '#d35400' } },
      { selector: 'edge.drift-unused', style: { 'line-style': 'dashed' } },
      { selector: '.faded', style: { opacity: 0.12 } },
      { selector: 'node.match', style: { 'border-width': 4, 'border-color': '#f1c40f', label: 'data(label)' } },
      { selector: 'node:selected', style: { label: 'data(label)' } },
      { selector: 'node:selected', style: { 'border-width': 4, 'border-color': '#111' } },
      { selector: '.path', style: { opacity: 1, 'z-index': 10 } },
      { selector: 'edge.path', style: { width: 5, 'line-color': '#e0115f', 'target-arrow-color': '#e0115f', 'line-style': 'solid' } },
      { selector: 'node.path', style: { 'border-width': 4, 'border-color': '#e0115f', label: 'data(label)' } },
      { selector: 'edge.virtual', style: { 'line-style': 'dotted' } },
    ],
  });
  return cy;
}

/** Fade everything but one path; hops that are not access edges (runs, credential) get a dotted edge. */
export function highlightPath(cy: Core, hops: PathHop[]): void {
  cy.batch(() => {
    cy.elements('.virtual').remove();
    cy.elements().removeClass('path').addClass('faded');
    for (const h of hops) {
      for (const n of [h.from, h.to]) {
        if (cy.getElementById(n.id).empty()) cy.add({ group: 'nodes', data: { id: n.id, label: n.name ?? n.id.slice(0, 8), kind: n.kind }, position: { x: 0, y: 0 } });
      }
      let edge = cy.getElementById(h.from.id).edgesWith(cy.getElementById(h.to.id));
      if (edge.empty()) edge = cy.add({ group: 'edges', data: { id: `virtual-${h.from.id}-${h.to.id}`, source: h.from.id, target: h.to.id }, classes: 'virtual' });
      edge.removeClass('faded').addClass('path');
      cy.getElementById(h.from.id).removeClass('faded').addClass('path');
      cy.getElementById(h.to.id).removeClass('faded').addClass('path');
    }
  });
  const on = cy.elements('.path');
  if (on.nonempty()) cy.animate({ fit: { eles: on, padding: 60 } }, { duration: 200 });
}

/** Fade all but a node and its neighbourhood. */
export function focusNode(cy: Core, id: string): void {
  const n = cy.getElementById(id);
  cy.batch(() => {
    cy.elements('.virtual').remove();
    cy.elements().removeClass('path');
    if (n.empty()) {
      cy.elements().removeClass('faded');
      return;
    }
    cy.elements().addClass('faded');
    n.closedNeighborhood().removeClass('faded');
    cy.$(':selected').unselect();
    n.select();
  });
}

export function clearFocus(cy: Core): void {
  cy.batch(() => {
    cy.elements('.virtual').remove();
    cy.elements().removeClass('faded path');
    cy.$(':selected').unselect();
  });
}
