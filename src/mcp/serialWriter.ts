// The stdio server's writes to stdout, one after another. The SDK's StdioServerTransport waits
// for 'drain' with a listener of its own per write the pipe did not take: answers piling up
// behind a slow reader add one each, and past ten Node prints a MaxListenersExceededWarning on
// stderr. Here a write the pipe did not take holds back the next until its own callback says it
// was flushed: no 'drain' listener at all, and answers go out whole, in the order they were sent.
// What waits here is counted (pendingChars), so that the server can stop reading requests while a
// reader that does not read holds the answers back, instead of queueing them without bound.

/** Writes text to a stream one write after another. */
export class SerialWriter {
  private last: Promise<void> = Promise.resolve();
  private fail: () => void = () => {};
  /** Resolves once a write failed: the reader is gone (EPIPE), or the stream was closed. */
  readonly failed = new Promise<void>((resolve) => (this.fail = resolve));

  private pending = 0;

  /**
   * `onSettled` is called each time a write was taken by the stream (or could not be), once it
   * no longer counts in pendingChars.
   */
  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly onSettled: () => void = () => {},
  ) {}

  /** The characters of the writes the stream has not taken yet: the queue a slow reader holds back. */
  get pendingChars(): number {
    return this.pending;
  }

  /**
   * Resolves once `text` was taken by the stream (written, or buffered under its high-water
   * mark), or could not be: a stream that failed calls back every write with its error, so a
   * reader that is gone never holds the queue up.
   */
  write(text: string): Promise<void> {
    this.pending += text.length;
    const written = this.last
      .then(
        () =>
          new Promise<void>((resolve) => {
            const lost = (): void => {
              this.fail();
              resolve();
            };
            try {
              if (this.out.write(text, (error?: Error | null) => (error ? lost() : resolve()))) resolve();
            } catch {
              // A stream that throws rather than calling back: the queue goes on without it.
              lost();
            }
          }),
      )
      .then(() => {
        this.pending -= text.length;
        this.onSettled();
      });
    this.last = written;
    return written;
  }

  /** Resolves once every write so far was taken, or could not be. */
  idle(): Promise<void> {
    return this.last;
  }
}
