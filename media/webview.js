// Shared script of the Code Memory panels: every element with data-msg posts its message
// ({type: ...}) to the extension; the extension decides what it means.
(function () {
  const vscode = acquireVsCodeApi();
  document.addEventListener('click', (event) => {
    const target = event.target instanceof Element ? event.target.closest('[data-msg]') : null;
    if (!target) return;
    event.preventDefault();
    try {
      vscode.postMessage(JSON.parse(target.getAttribute('data-msg')));
    } catch {
      // a malformed attribute is a bug in the page, not something to act on
    }
  });
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter') return;
    const target = event.target instanceof Element ? event.target.closest('[data-msg]') : null;
    if (target) target.dispatchEvent(new MouseEvent('click', { bubbles: true }));
  });
})();
