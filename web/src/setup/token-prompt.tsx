import { type FormEvent, useState } from 'react';

/** Asks for the server's token (CADRE_TOKEN or one from `cadre users add`); kept in this browser. */
export function TokenPrompt({
  onSubmit,
  rejected,
}: {
  onSubmit: (token: string) => void;
  rejected: boolean;
}) {
  const [token, setToken] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (token.trim()) onSubmit(token.trim());
  };
  return (
    <main className="token-page">
      <form className="token-card" onSubmit={submit} aria-labelledby="token-title">
        <h1 id="token-title">Sign in to Cadre</h1>
        <p>
          This server asks for a token: the value of <code>CADRE_TOKEN</code>, or one printed by{' '}
          <code>cadre users add NAME</code>. It is kept in this browser only.
        </p>
        {rejected && (
          <p className="notice notice-error" role="alert">
            That token was not accepted: the server does not know it. Check it and try again.
          </p>
        )}
        <label className="field">
          <span>Token</span>
          <input
            type="password"
            autoComplete="current-password"
            value={token}
            onChange={(event) => setToken(event.target.value)}
            // biome-ignore lint/a11y/noAutofocus: the only thing to do on this page
            autoFocus
          />
        </label>
        <button type="submit" className="button primary" disabled={!token.trim()}>
          Continue
        </button>
      </form>
    </main>
  );
}
