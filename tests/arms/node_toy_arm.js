// A toy JavaScript arm for tests/arms/test_node_seam.py, on the compiled seam helper
// (HARNESS_SEAM_JS names dist/seam.js). Each user message is a command:
//   echo WORDS     one delta per word
//   hang           one delta, then waits until the turn is cut (its abort signal)
//   stuck          one delta, then never settles (ignores the signal)
//   throw          one delta, then throws
//   bad            yields a number instead of a string
//   closed         whether the previous `hang` turn's finally block ran
//   addon          the user message as the arm must send it
//   system         the user message, then the turn context handed to it (a coupled study's)
const { Arm, serve } = require(process.env.HARNESS_SEAM_JS);

class Toy extends Arm {
  constructor() {
    super();
    this.name = "node-toy";
    this.cleaned = false;
  }
  async openSession(session) {
    if (session.item_id === "refuse") throw new Error("this item is refused");
  }
  async *turn(sessionId, turn) {
    const [command, ...rest] = turn.user.split(" ");
    if (command === "echo") {
      for (const word of rest) yield word + " ";
    } else if (command === "hang") {
      yield "waiting ";
      try {
        await new Promise((resolve) => turn.signal.addEventListener("abort", resolve));
      } finally {
        this.cleaned = true;
      }
    } else if (command === "stuck") {
      yield "stuck ";
      await new Promise(() => {}); // ignores the abort signal: never settles
    } else if (command === "throw") {
      yield "about to fail ";
      throw new Error("the engine broke\nsecond line");
    } else if (command === "bad") {
      yield 42;
    } else if (command === "closed") {
      yield String(this.cleaned);
    } else if (command === "addon") {
      yield turn.userMessage();
    } else if (command === "system") {
      yield `${turn.userMessage()}|${turn.systemAddon()}`;
    }
  }
}

serve(new Toy(), "127.0.0.1", 0);
