/**
 * The local OpenID Connect provider's own pages: the sign-in form, its error page and the sign-out confirmation.
 * Plain accessible HTML (labelled fields, a heading, a main landmark), no script and no inline style, so the pages'
 * Content-Security-Policy can be `default-src 'none'`.
 */

/** Escapes text for HTML content and attribute values. */
const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

/** A whole page around its main content. */
const page = (title: string, main: string): string =>
  `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} - dealer-gateway console (local)</title>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${main}
</main>
</body>
</html>
`;

/**
 * The sign-in form of one interaction: fields labelled "Email" and "Password", posted to `action`; after a failed
 * try, the reason (announced to screen readers: role="alert") and the email kept.
 *
 * @example
 * signInPage({ action: '/interaction/abc/login' }) // '<!DOCTYPE html>…<label for="email">Email</label>…'
 */
export const signInPage = (opts: { action: string; email?: string; problem?: string }): string =>
  page(
    'Sign in',
    `<p>Sign in to the dealer-gateway operations console with a development user (npm start prints them).</p>
${opts.problem ? `<p role="alert">${escapeHtml(opts.problem)}</p>\n` : ''}<form method="post" action="${escapeHtml(opts.action)}">
<p><label for="email">Email</label><br>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(opts.email ?? '')}"></p>
<p><label for="password">Password</label><br>
<input id="password" name="password" type="password" autocomplete="current-password" required></p>
<p><button type="submit">Sign in</button></p>
</form>`,
  );

/** The provider's error page: what went wrong, as OAuth names it. */
export const errorPage = (out: { error?: string; error_description?: string }): string =>
  page(
    'Sign-in failed',
    `<p>${escapeHtml(out.error ?? 'error')}${out.error_description ? `: ${escapeHtml(out.error_description)}` : ''}</p>`,
  );

/** The sign-out confirmation: the provider's own form (`form`, its hidden fields) and a button that submits it. */
export const signOutPage = (form: string): string =>
  page(
    'Sign out',
    `${form}<p><button type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button></p>`,
  );

/** After signing out without a way back to the console. */
export const signedOutPage = (): string => page('Signed out', '<p>You are signed out.</p>');
