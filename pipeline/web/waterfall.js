// Per-turn stage timings, drawn as bars from the end of the caller's speech. All times are
// this page's clock (performance.now()); server stages are mapped onto it by the caller.

export const STAGES = [
  ["speech_end", "speech end"],
  ["stt_final", "STT final"],
  ["turn_commit", "turn commit"],
  ["llm_first_token", "LLM first token"],
  ["tts_first_audio", "TTS first audio"],
  ["first_audio_out", "first audio out (server)"],
  ["first_audio_heard", "first audio heard (page)"],
];
const MIN_SCALE_MS = 1000;
const TURNS_SHOWN = 4;

export class Waterfall {
  constructor(container) {
    this.container = container;
    this.turns = new Map(); // turnId -> {atMs: {stage: perfMs}, label, figure}
  }

  turn(turnId) {
    let turn = this.turns.get(turnId);
    if (!turn) {
      turn = { atMs: {}, label: "", figure: null };
      this.turns.set(turnId, turn);
    }
    return turn;
  }

  /** The first time a stage is reached counts; later repeats are ignored. */
  mark(turnId, stage, atMs) {
    if (turnId == null || !Number.isFinite(atMs)) return;
    const turn = this.turn(turnId);
    if (stage in turn.atMs) return;
    turn.atMs[stage] = atMs;
    this.draw(turnId);
  }

  label(turnId, text) {
    this.turn(turnId).label = text;
    this.draw(turnId);
  }

  /** Milliseconds after speech end per stage, for one turn (null where not reached). */
  offsets(turnId) {
    const { atMs } = this.turn(turnId);
    const end = atMs.speech_end;
    return Object.fromEntries(STAGES.map(([stage]) =>
      [stage, end === undefined || atMs[stage] === undefined ? null : Math.round(atMs[stage] - end)]));
  }

  draw(turnId) {
    const turn = this.turn(turnId);
    if (turn.atMs.speech_end === undefined) return; // nothing to measure from yet
    if (!turn.figure) {
      turn.figure = document.createElement("figure");
      turn.figure.className = "turn-timing";
      turn.figure.dataset.turnId = turnId;
      this.container.prepend(turn.figure);
      while (this.container.children.length > TURNS_SHOWN) this.container.lastElementChild.remove();
    }
    const offsets = this.offsets(turnId);
    const reached = Object.values(offsets).filter((ms) => ms !== null);
    const scaleMs = Math.max(MIN_SCALE_MS, ...reached);
    const caption = document.createElement("figcaption");
    caption.textContent = turn.label ? `“${turn.label}”` : "this turn";
    const rows = STAGES.filter(([stage]) => offsets[stage] !== null).map(([stage, name]) => {
      const row = document.createElement("div");
      row.className = "stage";
      row.dataset.stage = stage;
      row.dataset.ms = offsets[stage];
      const label = document.createElement("span");
      label.className = "stage-name";
      label.textContent = name;
      const track = document.createElement("span");
      track.className = "track";
      const bar = document.createElement("span");
      bar.className = "bar";
      bar.style.width = `${(100 * Math.max(0, offsets[stage])) / scaleMs}%`;
      track.append(bar);
      const value = document.createElement("span");
      value.className = "stage-ms";
      value.textContent = stage === "speech_end" ? "0 ms" : `+${offsets[stage]} ms`;
      row.append(label, track, value);
      return row;
    });
    turn.figure.replaceChildren(caption, ...rows);
  }
}
