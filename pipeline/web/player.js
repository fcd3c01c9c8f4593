// Agent audio out: pcm16 deltas scheduled back to back on the AudioContext, with a count of
// what has actually sounded per item (for the truncate after a barge-in).

const START_MARGIN_S = 0.05; // room to schedule the first delta of a reply (and after a stall)

export class AgentPlayer {
  constructor(audioContext) {
    this.audioContext = audioContext;
    this.nextStartS = 0; // context time where the next delta starts
    this.segments = []; // {itemId, responseId, startS, durationS, node}, in play order
    this.heardMsDone = 0; // ms that sounded in finished or stopped segments
    this.itemHeardMs = new Map(); // itemId -> ms heard in finished or stopped segments
    this.onFirstAudio = null; // (responseId, itemId, atPerfMs) when a reply first sounds
    this.firstHeard = new Set();
  }

  /** Schedule one delta; returns the context time it will start. */
  enqueue(responseId, itemId, pcm, rateHz) {
    const ctx = this.audioContext;
    const buffer = ctx.createBuffer(1, pcm.length, rateHz);
    const samples = buffer.getChannelData(0);
    for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i] / 0x8000;
    const node = ctx.createBufferSource();
    node.buffer = buffer;
    node.connect(ctx.destination);
    const startS = Math.max(this.nextStartS, ctx.currentTime + START_MARGIN_S);
    node.start(startS);
    const segment = { itemId, responseId, startS, durationS: buffer.duration, rateHz, node };
    node.onended = () => this.retire(segment);
    this.segments.push(segment);
    this.nextStartS = startS + buffer.duration;
    if (!this.firstHeard.has(responseId)) {
      this.firstHeard.add(responseId);
      const atPerfMs = performance.now() + (startS - ctx.currentTime + this.latencyS()) * 1000;
      this.onFirstAudio?.(responseId, itemId, atPerfMs);
    }
    return startS;
  }

  latencyS() {
    return this.audioContext.outputLatency || this.audioContext.baseLatency || 0;
  }

  /** Seconds of `segment` heard by now (the output latency not yet through the speaker). */
  heardS(segment) {
    const now = this.audioContext.currentTime - this.latencyS();
    return Math.min(segment.durationS, Math.max(0, now - segment.startS));
  }

  /** A segment leaves the schedule: count what of it was heard (all of it, if it ended). */
  retire(segment, heardS = segment.durationS) {
    const index = this.segments.indexOf(segment);
    if (index < 0) return;
    this.segments.splice(index, 1);
    this.heardMsDone += heardS * 1000;
    this.itemHeardMs.set(segment.itemId, (this.itemHeardMs.get(segment.itemId) ?? 0) + heardS * 1000);
  }

  /** Silence a segment now, counting only what of it sounded. */
  cut(segment) {
    const heardS = this.heardS(segment);
    segment.node.onended = null;
    segment.node.stop();
    this.retire(segment, heardS);
  }

  /** Milliseconds of this item heard so far. */
  heardMs(itemId) {
    let ms = this.itemHeardMs.get(itemId) ?? 0;
    for (const segment of this.segments) {
      if (segment.itemId === itemId) ms += this.heardS(segment) * 1000;
    }
    return ms;
  }

  /** Milliseconds of agent audio heard so far in the whole call. */
  heardMsTotal() {
    let ms = this.heardMsDone;
    for (const segment of this.segments) ms += this.heardS(segment) * 1000;
    return ms;
  }

  /** True while something is scheduled that has not finished sounding. */
  get playing() {
    return this.segments.length > 0;
  }

  /** The item sounding now (or next), if any. */
  get currentItemId() {
    return this.segments[0]?.itemId ?? null;
  }

  /** Stop at once. Returns [{itemId, heardMs}] for each item that was cut, in play order. */
  stop() {
    const itemIds = [...new Set(this.segments.map((segment) => segment.itemId))];
    for (const segment of [...this.segments]) this.cut(segment);
    this.nextStartS = 0;
    return itemIds.map((itemId) => ({ itemId, heardMs: Math.floor(this.heardMs(itemId)) }));
  }

  /** Drop what is still to sound of this response (the server cancelled it). */
  dropResponse(responseId) {
    for (const segment of [...this.segments]) {
      if (segment.responseId === responseId) this.cut(segment);
    }
    if (this.segments.length === 0) this.nextStartS = 0;
  }
}
