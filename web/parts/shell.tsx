/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * The frame around every page: head (stylesheet, script, icon), the top bar with breadcrumbs and
 * the live-update indicator, and the footer. No inline style or script: the CSP forbids both.
 * @module
 */
import type { Child, FC } from "npm:hono@4.13.19/jsx";

/** What a component renders. */
export type Html = ReturnType<FC>;

const Logo: FC = () => (
  <svg viewBox="0 0 20 20" aria-hidden="true">
    <path d="M4 3v14" class="edge c0" />
    <path d="M4 7c0 3 8 2 8 6v4" class="edge c1" />
    <circle cx="4" cy="4" r="2.6" class="dot c0" />
    <circle cx="4" cy="16" r="2.6" class="dot c0" />
    <circle cx="12" cy="16" r="2.6" class="hollow c1" />
  </svg>
);

/** Props of {@linkcode Layout}. */
export type LayoutProps = {
  title: string;
  crumbs?: Child;
  /** The server-sent events URL the page's script follows for live updates (none: static). */
  events?: string;
  /** The data version the page was rendered at (the script reloads parts when it changes). */
  version?: string;
  children?: Child;
};

/** The page frame. */
export const Layout: FC<LayoutProps> = (
  { title, crumbs, events, version, children }: LayoutProps,
): Html => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="color-scheme" content="light dark" />
      <meta name="referrer" content="no-referrer" />
      <title>{title}</title>
      <link rel="icon" href="/assets/icon.svg" type="image/svg+xml" />
      <link rel="stylesheet" href="/assets/style.css" />
      <script src="/assets/app.js" defer></script>
    </head>
    <body data-events={events} data-version={version}>
      <header class="top">
        <a class="brand" href="/">
          <Logo />waymark
        </a>
        <nav class="crumbs" aria-label="Breadcrumbs">{crumbs}</nav>
        <span class="spacer"></span>
        {events ? <span id="live" class="live">connecting…</span> : null}
      </header>
      <main>{children}</main>
      <footer>waymark viewer · read-only · bound to this machine</footer>
    </body>
  </html>
);
