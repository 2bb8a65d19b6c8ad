// GET /zkt/docs: the OpenAPI document rendered for people (server-side, no external assets).
import { openApiDocument } from "./openapi.js";

const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function docsPage(): string {
  const doc = openApiDocument as unknown as {
    info: { title: string; description: string };
    paths: Record<string, Record<string, { summary: string; responses: Record<string, { description: string }> }>>;
    components: { schemas: Record<string, { description?: string }> };
  };
  const ops = Object.entries(doc.paths)
    .flatMap(([path, methods]) =>
      Object.entries(methods).map(
        ([method, op]) => `<section><h3><code>${method.toUpperCase()} ${esc(path)}</code></h3><p>${esc(op.summary)}</p>
<table><tr><th>status</th><th>meaning</th></tr>${Object.entries(op.responses)
          .map(([code, r]) => `<tr><td>${code}</td><td>${esc(r.description)}</td></tr>`)
          .join("")}</table></section>`,
      ),
    )
    .join("\n");
  const schemas = Object.entries(doc.components.schemas)
    .map(
      ([name, schema]) =>
        `<details><summary><code>${name}</code>${schema.description ? ` — ${esc(schema.description)}` : ""}</summary>` +
        `<pre>${esc(JSON.stringify(schema, null, 2))}</pre></details>`,
    )
    .join("\n");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(doc.info.title)}</title>
<style>body{font:15px/1.45 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem}pre{background:#f4f6fa;padding:.8rem;overflow:auto}
table{border-collapse:collapse}td,th{border:1px solid #dde;padding:.25rem .6rem;text-align:left}code{font:13px ui-monospace,monospace}</style></head>
<body><h1>${esc(doc.info.title)}</h1><p>${esc(doc.info.description)}</p><p><a href="/zkt/openapi.json">openapi.json</a> · <a href="/portal">portal</a></p>
<h2>Endpoints</h2>${ops}<h2>Schemas</h2>${schemas}</body></html>`;
}
