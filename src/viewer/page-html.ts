/**
 * The page's markup, shared by the served page and the HTML export. It is a constant: nothing
 * from a session is ever spliced into it (an export's data goes in as escaped JSON, see
 * `exportHtml`).
 */

const BODY = `<aside id="sidebar">
<input id="session-search" type="search" placeholder="Search sessions by id or words" aria-label="Search sessions">
<select id="session-sort" aria-label="Sort sessions"><option value="activity">Last activity</option><option value="created">Created</option><option value="id">Id</option></select>
<ul id="session-list"></ul>
</aside>
<main>
<header id="top"><button type="button" id="sidebar-toggle" aria-controls="sidebar" aria-expanded="false">Sessions</button><h1 id="title">palimpsest</h1><div id="stats"></div><div id="forks"></div><div id="verify-status" role="status"></div></header>
<nav id="tabs">
<button type="button" data-view="model" class="active">Model view</button>
<button type="button" data-view="transcript">Transcript</button>
<button type="button" data-view="raw">Raw log</button>
<input id="find" type="search" placeholder="Find (f)" aria-label="Find in this view">
<span id="live"></span>
</nav>
<section id="travel">
<label for="travel-range">Time travel (t)</label>
<input id="travel-range" type="range" min="0" max="0" value="0" aria-label="Event">
<input id="travel-seq" type="number" min="0" aria-label="Show the surface after event">
<button type="button" id="travel-now">Now</button>
<div id="travel-info"></div>
<div id="travel-header"></div>
</section>
<div id="panes"><div id="list" class="list" tabindex="0"></div><article id="detail"></article></div>
<section id="panel" hidden></section>
</main>`;

/** A whole document: `head` holds the CSP, style and script tags the caller made. */
export function pageDocument(head: string, bodyEnd = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>palimpsest viewer</title>
${head}
</head>
<body>
${BODY}
${bodyEnd}
</body>
</html>
`;
}
