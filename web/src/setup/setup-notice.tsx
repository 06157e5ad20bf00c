/** Shown instead of a failing first message when the server has no model: the CLI's own explanation. */
export function SetupNotice({ message }: { message: string }) {
  return (
    <section className="setup" aria-labelledby="setup-title">
      <h2 id="setup-title">Set a model to start</h2>
      <pre className="setup-text">{message}</pre>
      <p>
        Then restart <code>cadre serve</code> and reload this page.
      </p>
    </section>
  );
}
