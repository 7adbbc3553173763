/**
 * The page's entry point. In an HTML export the session is embedded and the page is done once
 * it renders; served, it lists the store's sessions and streams the one the URL's hash names
 * (`#/s/ID`), applying each batch a writer commits.
 */
// First: it asks for the routed session's stream before the rest of the page is evaluated.
import './early-stream.js';
import { SessionPage } from './app.js';
import { route } from './early-stream.js';
import { takeExportedDigests } from './exported-requests.js';
import { sessionChecks } from './session-checks.js';
import { SessionSidebar } from './sessions.js';
import { embeddedSnapshot, ServerSource } from './source.js';

function routeId(): string | undefined {
  return route()?.id;
}

function boot(): void {
  const embedded = embeddedSnapshot();
  if (embedded !== undefined) {
    document.body.classList.add('exported');
    sessionChecks.open(embedded.snapshot, undefined);
    takeExportedDigests(embedded.snapshot);
    new SessionPage(undefined).load(embedded.snapshot, embedded.bytes);
    return;
  }
  const source = new ServerSource();
  const page = new SessionPage((id) => `#/s/${encodeURIComponent(id)}`);
  const sidebar = new SessionSidebar(source, routeId);
  let streaming: AbortController | undefined;
  // The list is asked for once the routed session's snapshot is in: the server reads every
  // session's log for its counts, which would compete with reading the one the person opened.
  let listed = false;
  const list = (): void => {
    if (listed) return;
    listed = true;
    void sidebar.refresh();
  };
  const open = (): void => {
    streaming?.abort();
    sidebar.render();
    const routed = route();
    if (routed === undefined) {
      list();
      return;
    }
    const { id, seq } = routed;
    const controller = new AbortController();
    streaming = controller;
    void source.stream(
      id,
      {
        snapshot: (snapshot, bytes) => {
          sessionChecks.open(snapshot, source);
          page.load(snapshot, bytes);
          if (seq !== undefined) page.reveal(seq);
          list();
          // The stubs' bodies, after the first render (the model view never shows them), then
          // verify's checks, which read the whole log on the server.
          const bodies =
            page.missingBodies() === 0
              ? Promise.resolve()
              : source.chunks(id, controller.signal).then(
                  ({ chunks, bytes }) => page.takeBodies(chunks, bytes),
                  (error: unknown) => {
                    if (!controller.signal.aborted) page.fail(String(error));
                  },
                );
          const head = snapshot.events.length;
          void bodies.then(() =>
            controller.signal.aborted ? undefined : sessionChecks.check(head),
          );
        },
        events: (batch, bytes) => page.append(batch, bytes),
        failure: (message) => {
          page.fail(message);
          list();
        },
      },
      controller.signal,
    );
  };
  window.addEventListener('hashchange', open);
  open();
}

boot();
