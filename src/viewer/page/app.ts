/**
 * The page's controller: one session in three linked views, selection and provenance
 * highlighting, expansion, time travel, find, the keyboard, and live batches applied without
 * moving the reader's scroll position or selection.
 */
import { eventProvenance, type ProvenanceNode } from '../../core/provenance.js';
import { MARKS, type SessionAppend, type SessionSnapshot } from '../protocol.js';
import { sessionContextWindow } from './context-window.js';
import { detail } from './detail.js';
import { byId, el, replaceChildren } from './dom.js';
import { closeKeyHelp, focusSessionSearch, toggleKeyHelp } from './keys.js';
import type { Panel, PanelContext } from './panel.js';
import { PANELS } from './panels.js';
import { rowText } from './row-text.js';
import { type Row, type SurfaceAt, ViewedSession, type ViewName } from './state.js';
import { subagentParent } from './subagents.js';
import { headerText, rewriteText, statsText } from './summary.js';
import { count, counted } from './text.js';
import { VirtualList } from './virtual-list.js';

/** How an event relates to the selected one. */
type Relation = 'source' | 'citer' | 'shadowed' | 'shadower';

/** Context window a bar is drawn against when neither the request header nor the model says. */
const DEFAULT_CONTEXT_WINDOW = 128_000;

/** How the page links to another session: a hash route when served, nothing in an export. */
export type SessionLinker = ((id: string) => string) | undefined;

function flatten(nodes: readonly ProvenanceNode[] | undefined, into: Map<number, Relation>): void {
  for (const node of nodes ?? []) {
    into.set(node.seq, 'source');
    flatten(node.derivedFrom, into);
  }
}

/**
 * The page for one session at a time: `load` shows a snapshot, `append` applies a live batch.
 * Selection and expansion are remembered by row key, so neither moves when rows are added.
 */
export class SessionPage {
  private viewed: ViewedSession | undefined;
  private view: ViewName = 'model';
  /** The panel shown instead of the list views, if one is. */
  private panel: Panel | undefined;
  private children: readonly string[] = [];
  private rows: readonly Row[] = [];
  private selectedKey: string | undefined;
  private selectedSeq: number | undefined;
  private related = new Map<number, Relation>();
  private readonly expanded: Record<ViewName, Set<string>> = {
    model: new Set(),
    transcript: new Set(),
    raw: new Set(),
  };
  /** Time travel: the model view shows the surface after this event; `undefined` is now. */
  private at: SurfaceAt | undefined;
  private readonly list: VirtualList;
  private contextWindow = DEFAULT_CONTEXT_WINDOW;

  constructor(private readonly linker: SessionLinker) {
    this.list = new VirtualList(byId('list'), (element, row) => this.paint(element, row));
    const find = byId<HTMLInputElement>('find');
    for (const panel of PANELS) {
      find.before(
        el(
          'button',
          { type: 'button', 'data-view': panel.name, title: `${panel.label} (${panel.key})` },
          panel.label,
        ),
      );
    }
    for (const button of document.querySelectorAll<HTMLButtonElement>('#tabs [data-view]')) {
      button.addEventListener('click', () => this.showNamed(button.dataset.view));
    }
    byId('list').addEventListener('click', (event) => this.onListClick(event));
    const range = byId<HTMLInputElement>('travel-range');
    range.addEventListener('input', () => this.travel(Number(range.value)));
    const seq = byId<HTMLInputElement>('travel-seq');
    seq.addEventListener('change', () => this.travel(Number(seq.value)));
    seq.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') this.travel(Number(seq.value));
    });
    byId('travel-now').addEventListener('click', () => this.travel(undefined));
    find.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') this.find(find.value);
    });
    document.addEventListener('keydown', (event) => this.onKey(event));
  }

  /** Shows a snapshot: the first render of the model view. */
  load(snapshot: SessionSnapshot, bytes: number): void {
    this.viewed = new ViewedSession(snapshot.header, snapshot.events, bytes);
    this.selectedKey = undefined;
    this.selectedSeq = undefined;
    this.related.clear();
    this.at = undefined;
    for (const set of Object.values(this.expanded)) set.clear();
    this.readContextWindow();
    byId('title').textContent = snapshot.header.id;
    this.children = snapshot.children;
    this.renderForks(snapshot);
    this.show('model');
    performance.mark(MARKS.firstRender);
    this.renderStats();
    this.renderTravel();
    replaceChildren(
      byId('detail'),
      el('p', { class: 'hint' }, 'Select a row (j/k, click) to see it whole and why it is here.'),
    );
  }

  /** Applies one committed batch. */
  append(batch: SessionAppend, bytes: number): void {
    const viewed = this.viewed;
    if (viewed === undefined) return;
    performance.mark(MARKS.appendStart);
    const from = viewed.session.seq;
    const rewritten = viewed.appendEvents(batch.events, bytes);
    if (rewritten || this.at !== undefined) this.rebuild();
    else this.extend(from);
    this.list.setRows(this.rows);
    this.noteCitations(batch);
    if (this.panel !== undefined) {
      const into = byId('panel');
      if (this.panel.extend === undefined || rewritten)
        this.panel.render(into, viewed, this.panelContext());
      else this.panel.extend(into, viewed, from, this.panelContext());
    }
    this.renderStats();
    this.renderTravel();
    performance.mark(MARKS.appendEnd);
    performance.measure(MARKS.append, MARKS.appendStart, MARKS.appendEnd);
    byId('live').textContent =
      `live · last batch #${batch.events[batch.events.length - 1]?.seq ?? '?'}`;
  }

  /** Stubs of the loaded snapshot still without their body. */
  missingBodies(): number {
    return this.viewed?.missingBodies ?? 0;
  }

  /** Takes the bodies of the snapshot's stubs and repaints what shows them. */
  takeBodies(chunks: readonly unknown[], bytes: number): void {
    const viewed = this.viewed;
    if (viewed === undefined || viewed.takeBodies(chunks, bytes) === 0) return;
    this.list.refresh();
    this.renderStats();
    this.renderDetail();
  }

  /** Shows a failure of the stream in the status area, as text. */
  fail(message: string): void {
    byId('live').textContent = `stream ended: ${message}`;
  }

  private readContextWindow(): void {
    const window = this.viewed === undefined ? undefined : sessionContextWindow(this.viewed);
    this.contextWindow = window?.tokens ?? DEFAULT_CONTEXT_WINDOW;
  }

  /** Shows the list view or panel a tab names. */
  private showNamed(name: string | undefined): void {
    const panel = PANELS.find((candidate) => candidate.name === name);
    if (panel !== undefined) this.showPanel(panel);
    else if (name === 'model' || name === 'transcript' || name === 'raw') this.show(name);
  }

  private markTab(name: string): void {
    for (const button of document.querySelectorAll<HTMLButtonElement>('#tabs [data-view]')) {
      const active = button.dataset.view === name;
      button.classList.toggle('active', active);
      button.setAttribute('aria-pressed', String(active));
    }
    document.body.dataset.view = name;
  }

  private showPanel(panel: Panel): void {
    const viewed = this.viewed;
    if (viewed === undefined) return;
    this.panel = panel;
    this.markTab(panel.name);
    byId('find').hidden = true;
    const into = byId('panel');
    into.hidden = false;
    panel.render(into, viewed, this.panelContext());
  }

  private panelContext(): PanelContext {
    return {
      sessionLink: (id, className) => this.sessionLink(id, className),
      reveal: (seq) => this.selectSeq(seq),
      children: this.children,
      linker: this.linker,
    };
  }

  private show(view: ViewName): void {
    this.view = view;
    if (this.panel !== undefined) {
      this.panel = undefined;
      const into = byId('panel');
      into.hidden = true;
      into.replaceChildren();
    }
    byId('find').hidden = false;
    this.markTab(view);
    this.rebuild();
    if (this.selectedSeq !== undefined) this.selectedKey = this.keyFor(this.selectedSeq);
    this.list.setRows(this.rows);
    const index = this.selectedKey === undefined ? -1 : this.list.indexOf(this.selectedKey);
    if (index >= 0) this.list.reveal(index);
  }

  private rebuild(): void {
    const viewed = this.viewed;
    if (viewed === undefined) return;
    const expanded = this.expanded[this.view];
    if (this.view === 'model') {
      const seqs = this.at?.seqs ?? viewed.session.surface.seqs;
      this.rows = viewed.modelRows(seqs, expanded);
    } else if (this.view === 'transcript') this.rows = viewed.transcriptRows();
    else this.rows = viewed.rawRows(expanded);
  }

  /** Adds the rows of a batch without a replace: O(batch), the scroll position untouched. */
  private extend(from: number): void {
    const viewed = this.viewed as ViewedSession;
    if (this.view === 'model') {
      this.rows = this.rows.concat(viewed.appendedModelRows(from));
    } else if (this.view === 'transcript') {
      this.rows = viewed.transcriptRows();
    } else {
      // A trailing chunk run may go on in the batch: redo the rows from the run's start.
      let cut = this.rows.length;
      while (cut > 0 && viewed.event((this.rows[cut - 1] as Row).seq)?.type === 'assistant/chunk')
        cut--;
      const start = cut < this.rows.length ? (this.rows[cut] as Row).seq : from;
      this.rows = viewed.rawRows(this.expanded.raw, start, this.rows.slice(0, cut));
    }
  }

  private keyFor(seq: number): string | undefined {
    const prefix = { model: 'm', transcript: 't', raw: 'r' }[this.view];
    const direct = this.rows.find((row) => row.key === `${prefix}${seq}`);
    if (direct !== undefined) return direct.key;
    return this.rows.find((row) => row.seqs?.includes(seq) === true)?.key;
  }

  private select(key: string, seq: number): void {
    this.selectedKey = key;
    this.selectedSeq = seq;
    const viewed = this.viewed as ViewedSession;
    const provenance = eventProvenance(viewed.session, seq);
    this.related = new Map();
    flatten(provenance?.derivedFrom, this.related);
    for (const by of provenance?.citedBy ?? []) this.related.set(by, 'citer');
    for (const by of provenance?.shadowedBy ?? []) this.related.set(by, 'shadower');
    for (const shadowed of viewed.replacements().get(seq)?.shadowedSeqs ?? []) {
      this.related.set(shadowed, 'shadowed');
    }
    this.list.refresh();
    this.renderDetail();
  }

  /** New events citing the selection light up as they arrive. */
  private noteCitations(batch: SessionAppend): void {
    const selected = this.selectedSeq;
    if (selected === undefined) return;
    let changed = false;
    for (const event of batch.events) {
      if (event.sourceEventSeqs?.includes(selected) === true) {
        this.related.set(event.seq, 'citer');
        changed = true;
      }
    }
    if (changed) this.list.refresh();
  }

  /** Selects event `seq` and scrolls to it (a search hit the reader opened). */
  reveal(seq: number): void {
    this.selectSeq(seq);
  }

  /** Selects `seq` where it has a row: this view, else the raw log. */
  private selectSeq(seq: number): void {
    if (this.panel !== undefined) this.show(this.view);
    let key = this.keyFor(seq);
    if (key === undefined) {
      this.show('raw');
      key = this.keyFor(seq);
    }
    if (key === undefined) return;
    this.select(key, seq);
    const index = this.list.indexOf(key);
    if (index >= 0) this.list.reveal(index);
  }

  private showChunks(seqs: readonly number[]): void {
    this.show('raw');
    for (const row of this.rows) {
      if (row.kind === 'chunks' && row.seqs?.some((seq) => seqs.includes(seq)))
        this.expanded.raw.add(row.key);
    }
    this.rebuild();
    this.list.setRows(this.rows);
    const first = seqs[0];
    const index = first === undefined ? -1 : this.list.indexOf(`r${first}`);
    if (index >= 0) this.list.reveal(index);
  }

  private toggle(key: string): void {
    const set = this.expanded[this.view];
    if (set.has(key)) set.delete(key);
    else set.add(key);
    this.rebuild();
    this.list.setRows(this.rows);
  }

  private move(by: number): void {
    if (this.rows.length === 0) return;
    const current = this.selectedKey === undefined ? -1 : this.list.indexOf(this.selectedKey);
    const index = Math.min(this.rows.length - 1, Math.max(0, current + by));
    const row = this.rows[index] as Row;
    this.select(row.key, row.seq);
    this.list.reveal(index);
  }

  private find(query: string): void {
    const needle = query.toLowerCase();
    if (needle === '' || this.viewed === undefined) return;
    const start = this.selectedKey === undefined ? -1 : this.list.indexOf(this.selectedKey);
    for (let step = 1; step <= this.rows.length; step++) {
      const index = (start + step) % this.rows.length;
      const row = this.rows[index] as Row;
      const text = rowText(this.viewed, row);
      if (
        `${text.label} ${text.text} ${text.note ?? ''} #${row.seq}`.toLowerCase().includes(needle)
      ) {
        this.select(row.key, row.seq);
        this.list.reveal(index);
        return;
      }
    }
    byId('live').textContent = `no row matches “${query}”`;
  }

  private travel(at: number | undefined): void {
    const viewed = this.viewed;
    if (viewed === undefined) return;
    const last = viewed.session.seq - 1;
    if (at === undefined || !Number.isInteger(at) || at >= last || at < 0) this.at = undefined;
    else this.at = viewed.surfaceAt(at);
    this.renderTravel();
    if (this.view !== 'model') this.show('model');
    else {
      this.rebuild();
      this.list.setRows(this.rows);
    }
  }

  private renderTravel(): void {
    const viewed = this.viewed;
    if (viewed === undefined) return;
    const last = viewed.session.seq - 1;
    const at = this.at?.at ?? last;
    const range = byId<HTMLInputElement>('travel-range');
    range.max = String(Math.max(0, last));
    range.value = String(at);
    const seq = byId<HTMLInputElement>('travel-seq');
    seq.max = range.max;
    if (document.activeElement !== seq) seq.value = String(at);
    const messages = this.at === undefined ? viewed.session.surface.size : this.at.seqs.length;
    document.body.classList.toggle('travelling', this.at !== undefined);
    replaceChildren(
      byId('travel-info'),
      `${this.at === undefined ? 'now' : `after #${at}`}: ${counted(messages, 'surface entry', 'surface entries')} · ${rewriteText(viewed, at)}`,
    );
    replaceChildren(byId('travel-header'), headerText(viewed, at));
  }

  private renderStats(): void {
    const viewed = this.viewed;
    if (viewed === undefined) return;
    replaceChildren(byId('stats'), ...statsText(viewed).map((text) => el('span', {}, text)));
  }

  /** A link to session `id`: a hash route when served, its id as text in an export. */
  private sessionLink(id: string, className: string): HTMLElement {
    return this.linker === undefined
      ? el('span', { class: className }, id)
      : el('a', { href: this.linker(id), class: className }, id);
  }

  private renderForks(snapshot: SessionSnapshot): void {
    const link = (id: string): HTMLElement => this.sessionLink(id, 'fork');
    const parent = snapshot.header.parentSession;
    const subagentOf = subagentParent(snapshot.header);
    replaceChildren(
      byId('forks'),
      subagentOf === undefined
        ? null
        : el(
            'span',
            { 'data-testid': 'subagent-of' },
            'subagent of ',
            this.sessionLink(subagentOf.session, 'parent'),
            subagentOf.toolCallId === undefined ? '' : ` (call ${subagentOf.toolCallId})`,
            parent === undefined ? '' : ' · ',
          ),
      parent === undefined
        ? null
        : el(
            'span',
            {},
            'forked from ',
            link(parent),
            ` at #${(snapshot.header.seedLength ?? 1) - 1}`,
          ),
      snapshot.children.length === 0
        ? null
        : el(
            'span',
            {},
            parent === undefined && subagentOf === undefined ? 'forks: ' : ' · forks: ',
            ...snapshot.children.flatMap((id, i) => (i === 0 ? [link(id)] : [', ', link(id)])),
          ),
    );
  }

  private renderDetail(): void {
    const viewed = this.viewed;
    const seq = this.selectedSeq;
    if (viewed === undefined || seq === undefined) return;
    const pane = byId('detail');
    replaceChildren(
      pane,
      ...detail(viewed, seq, {
        select: (target) => this.selectSeq(target),
        showChunks: (seqs) => this.showChunks(seqs),
        toggle: () => {
          if (this.selectedKey !== undefined) this.toggle(this.selectedKey);
        },
        session: (id) => this.sessionLink(id, 'child-session'),
      }),
    );
    pane.scrollTop = 0;
  }

  private paint(element: HTMLElement, row: Row): void {
    const viewed = this.viewed as ViewedSession;
    const text = rowText(viewed, row);
    const relation =
      this.related.get(row.seq) ??
      row.seqs?.map((seq) => this.related.get(seq)).find((r) => r !== undefined);
    element.dataset.key = row.key;
    element.dataset.seq = String(row.seq);
    element.classList.add(`kind-${row.kind}`, `depth-${Math.min(row.depth, 4)}`);
    if (row.key === this.selectedKey) element.classList.add('selected');
    if (relation !== undefined) element.classList.add(`rel-${relation}`);
    if (this.view === 'transcript' && !viewed.onSurface(row.seq))
      element.classList.add('hidden-from-model');
    const open = this.expanded[this.view].has(row.key);
    const share = text.tokens === undefined ? 0 : Math.min(1, text.tokens / this.contextWindow);
    const bar = el(
      'span',
      {
        class: 'bar',
        title: `${(share * 100).toFixed(2)}% of ${count(this.contextWindow)} tokens`,
      },
      el('span', { class: 'fill' }),
    );
    (bar.firstChild as HTMLElement).style.width =
      `${Math.max(share * 100, text.tokens === undefined ? 0 : 1)}%`;
    element.append(
      el('span', { class: 'twisty' }, row.expandable ? (open ? '▾' : '▸') : ''),
      el('span', { class: 'seq' }, `#${row.seq}`),
      el('span', { class: `label role-${text.label.replace(/[^a-z]/g, '')}` }, text.label),
      el('span', { class: 'text' }, text.text),
      text.note === undefined ? '' : el('span', { class: 'note', title: text.note }, text.note),
      el('span', { class: 'tokens' }, text.tokens === undefined ? '' : `~${count(text.tokens)}`),
      text.tokens === undefined ? el('span', { class: 'bar empty' }) : bar,
    );
  }

  private onListClick(event: MouseEvent): void {
    const target = event.target as HTMLElement;
    const element = target.closest<HTMLElement>('.row');
    if (element === null) return;
    const index = Number(element.dataset.index);
    const row = this.list.row(index);
    if (row === undefined) return;
    if (target.classList.contains('twisty') && row.expandable) {
      this.toggle(row.key);
      return;
    }
    this.select(row.key, row.seq);
  }

  private onKey(event: KeyboardEvent): void {
    const target = event.target as HTMLElement;
    const typing =
      target.tagName === 'INPUT' || target.tagName === 'SELECT' || target.tagName === 'TEXTAREA';
    if (event.key === 'Escape') {
      if (!closeKeyHelp()) target.blur();
      return;
    }
    // A key the focused element took (a trace row's Enter) is not the page's.
    if (typing || event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    const panel = this.panel;
    switch (event.key) {
      case 'j':
      case 'ArrowDown':
      case 'k':
      case 'ArrowUp': {
        const by = event.key === 'j' || event.key === 'ArrowDown' ? 1 : -1;
        if (panel === undefined) this.move(by);
        else if (panel.keys?.move !== undefined) panel.keys.move(byId('panel'), by);
        else return; // the arrows scroll a panel without items to move through
        break;
      }
      case 'Enter': {
        // A control's Enter is its own (a button presses, a link opens).
        if (target.closest('button, a, summary') !== null) return;
        if (panel !== undefined) {
          panel.keys?.open?.(byId('panel'));
          break;
        }
        const index = this.selectedKey === undefined ? -1 : this.list.indexOf(this.selectedKey);
        const row = this.rows[index];
        if (row?.expandable === true) this.toggle(row.key);
        break;
      }
      case '/':
        // As before the panels: a list view's find. A panel has no find box: the session search.
        if (panel === undefined) byId('find').focus();
        else if (this.linker !== undefined) focusSessionSearch();
        break;
      case 'f':
        if (panel !== undefined) return;
        byId('find').focus();
        break;
      case 's':
        // The session list's search, from any view (an export has no session list).
        if (this.linker === undefined) return;
        focusSessionSearch();
        break;
      case '?':
        toggleKeyHelp(panel, PANELS, this.linker !== undefined);
        break;
      case 't': {
        const seq = byId<HTMLInputElement>('travel-seq');
        seq.focus();
        seq.select();
        break;
      }
      case '1':
        this.show('model');
        break;
      case '2':
        this.show('transcript');
        break;
      case '3':
        this.show('raw');
        break;
      default: {
        const panel = PANELS.find((candidate) => candidate.key === event.key);
        if (panel === undefined) return;
        this.showPanel(panel);
      }
    }
    event.preventDefault();
  }
}
