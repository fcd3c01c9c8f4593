// The page: microphone → /v1/realtime → speaker, with the conversation, per-turn timings and
// settings. Any realtime-API client does the same; this one also reads the local x.* events.

import { Microphone, MicrophoneRefused } from "./microphone.js";
import { AgentPlayer } from "./player.js";
import { RealtimeSocket, pcm16FromBase64, toBase64 } from "./realtime.js";
import { TranscriptView } from "./transcript.js";
import { Waterfall } from "./waterfall.js";

// silence_duration_ms per turn preset: turn.min_silence_ms of TURN_PRESETS in pipeline/config.py
export const TURN_PRESET_SILENCE_MS = { fast: 300, default: 600, deliberate: 900 };
const RATE_HZ = 24000; // pcm16 at 24 kHz both ways: the realtime API's default format
const AUDIO_LOG_KEEP = 3000; // 60 s of 20 ms appends: enough to place any turn's speech end

const LOCAL_TIME_TOOL = {
  type: "function",
  name: "get_local_time",
  description: "The caller's local date, time and time zone, read from their browser.",
  parameters: {
    type: "object",
    required: ["holding_line"],
    properties: {
      // spoken: the agent says it while the tool runs, so the line is never silent
      holding_line: { type: "string", spoken: true, description: "A short sentence to say while looking." },
    },
  },
};

const $ = (id) => document.getElementById(id);
const ui = {
  start: $("start"), stop: $("stop"), status: $("status"), alert: $("alert"), level: $("mic-level"),
  played: $("played-ms"), turnPreset: $("turn-preset"), bargeIn: $("barge-in"), offerTool: $("offer-tool"),
  instructions: $("instructions"), token: $("token"), recording: $("recording"),
};
const RECORDING_TRIES = 40; // 250 ms apart: the server mixes a call's WAV once the call ends

class Call {
  constructor() {
    this.audioContext = new AudioContext({ latencyHint: "interactive" });
    this.player = new AgentPlayer(this.audioContext);
    this.player.onFirstAudio = (responseId, _itemId, atMs) =>
      this.waterfall.mark(this.turnOfResponse.get(responseId), "first_audio_heard", atMs);
    this.transcript = new TranscriptView($("transcript"));
    this.waterfall = new Waterfall($("waterfall"));
    this.microphone = new Microphone(this.audioContext, { targetRateHz: RATE_HZ, onChunk: (pcm, db) => this.onMicrophone(pcm, db) });
    this.socket = null;
    this.inputRateHz = RATE_HZ;
    this.outputRateHz = RATE_HZ;
    this.audioLog = []; // [ms of audio sent so far, performance.now() when that audio was captured]
    this.sentMs = 0;
    this.serverOffsetMs = Infinity; // page clock minus server perf clock, smallest seen (≈ no transit)
    this.turnOfResponse = new Map();
    this.liveItems = new Set(); // agent audio items of replies not yet done
    this.committedTurns = [];
    this.levelDbfs = -120;
    this.ended = false;
    this.sessionId = null;
    this.token = "";
  }

  async start() {
    await this.audioContext.resume();
    await this.microphone.open();
    this.token = ui.token.value.trim();
    this.socket = new RealtimeSocket({
      token: this.token,
      onOpen: () => this.onOpen(),
      onEvent: (event, arrivedMs) => this.onEvent(event, arrivedMs),
      onClosed: (reason) => this.onClosed(reason),
    });
    setStatus("connecting", "Connecting…");
    this.socket.connect();
    this.tick();
  }

  hangUp() {
    if (this.ended) return;
    this.ended = true;
    this.socket?.close();
    this.microphone.close();
    this.player.stop();
    this.audioContext.close();
    if (this.sessionId) offerRecording(this.sessionId, this.token);
  }

  onOpen() {
    this.sendSettings();
    setStatus("live", "Connected: speak now");
  }

  onClosed(reason) {
    if (this.ended) return;
    this.hangUp();
    showAlert(reason.message, reason.kind);
    setStatus(reason.kind === "ended" ? "idle" : "error", reason.kind === "ended" ? "Call ended" : "Disconnected");
    endCall();
  }

  sendSettings() {
    const turnDetection = {
      type: "server_vad",
      silence_duration_ms: TURN_PRESET_SILENCE_MS[ui.turnPreset.value],
      create_response: true,
      interrupt_response: ui.bargeIn.checked,
    };
    const session = {
      type: "realtime",
      include_local_events: true, // timings for the waterfall (a hosted API ignores it)
      tools: ui.offerTool.checked ? [LOCAL_TIME_TOOL] : [],
      audio: {
        input: { format: { type: "audio/pcm", rate: RATE_HZ }, turn_detection: turnDetection },
        output: { format: { type: "audio/pcm", rate: RATE_HZ } },
      },
    };
    const instructions = ui.instructions.value.trim();
    if (instructions) session.instructions = instructions;
    this.socket.send({ type: "session.update", session });
  }

  // --- microphone in ------------------------------------------------------------------------

  onMicrophone(pcm, levelDbfs) {
    this.levelDbfs = levelDbfs;
    if (!this.socket?.opened) return; // audio-ms 0 is the first sample the server gets
    this.socket.send({ type: "input_audio_buffer.append", audio: toBase64(pcm) });
    this.sentMs += (pcm.length * 1000) / this.inputRateHz;
    this.audioLog.push([this.sentMs, performance.now()]);
    if (this.audioLog.length > AUDIO_LOG_KEEP) this.audioLog.shift();
  }

  /** When the audio at `audioMs` of the input stream was captured, on the page clock. */
  capturedAt(audioMs) {
    const entry = this.audioLog.find(([sentMs]) => sentMs >= audioMs);
    if (!entry) return undefined;
    return entry[1] - (entry[0] - audioMs);
  }

  // --- events out of the server ---------------------------------------------------------------

  onEvent(event, arrivedMs) {
    const handler = HANDLERS[event.type];
    if (handler) handler.call(this, event, arrivedMs);
  }

  sessionUpdated(event) {
    const format = event.session?.audio?.input?.format;
    if (format?.rate && format.rate !== this.inputRateHz) {
      this.inputRateHz = format.rate;
      this.microphone.setTargetRate(format.rate);
    }
    this.outputRateHz = event.session?.audio?.output?.format?.rate ?? this.outputRateHz;
    this.sessionId = event.session?.id ?? this.sessionId;
  }

  speechStarted(event) {
    this.transcript.callerLine(event.item_id);
    if (ui.bargeIn.checked) this.bargeIn();
  }

  /** The caller cut in: silence the agent now and tell the server how much was heard. The
   * server may have paused the reply while it judged the interruption, so the page's queue can
   * be empty by now: every reply still in progress that was partly heard is truncated. */
  bargeIn() {
    const cut = new Set([...this.player.stop().map(({ itemId }) => itemId), ...this.liveItems]);
    for (const itemId of cut) {
      const heardMs = Math.floor(this.player.heardMs(itemId));
      if (heardMs > 0) {
        this.socket.send({ type: "conversation.item.truncate", item_id: itemId, content_index: 0, audio_end_ms: heardMs });
      }
    }
  }

  speechStopped(event) {
    // the GA committed event carries no audio times; speech_stopped has the end of speech
    this.waterfall.mark(event.item_id, "speech_end", this.capturedAt(event.audio_end_ms));
  }

  committed(event, arrivedMs) {
    if (event.audio_end_ms !== undefined) this.speechStopped(event);
    this.waterfall.mark(event.item_id, "turn_commit", arrivedMs);
    this.committedTurns.push(event.item_id);
  }

  transcriptionCompleted(event, arrivedMs) {
    this.transcript.callerFinal(event.item_id, event.transcript);
    this.waterfall.mark(event.item_id, "stt_final", arrivedMs);
    this.waterfall.label(event.item_id, event.transcript);
  }

  responseCreated(event) {
    const responseId = event.response.id;
    if (!this.turnOfResponse.has(responseId)) {
      // without local events: a reply answers the newest committed turn that has none yet
      const answered = new Set(this.turnOfResponse.values());
      const turnId = this.committedTurns.findLast((id) => !answered.has(id));
      if (turnId) this.turnOfResponse.set(responseId, turnId);
    }
  }

  outputItemAdded(event) {
    const item = event.item;
    if (item.type === "message") {
      this.liveItems.add(item.id);
      this.transcript.agentLine(item.id);
    }
    else if (item.type === "function_call") this.transcript.toolCall(item.call_id, item.name, item.arguments ?? "");
  }

  audioDelta(event) {
    const pcm = pcm16FromBase64(event.delta);
    this.player.enqueue(event.response_id, event.item_id, pcm, this.outputRateHz);
    this.transcript.agentAudio(event.item_id, (pcm.length * 1000) / this.outputRateHz);
  }

  functionCallDone(event) {
    this.transcript.toolCall(event.call_id, event.name, event.arguments);
    if (event.name === LOCAL_TIME_TOOL.name && ui.offerTool.checked) {
      const output = JSON.stringify({
        local_time: new Date().toLocaleString(),
        time_zone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      });
      this.socket.send({ type: "conversation.item.create", item: { type: "function_call_output", call_id: event.call_id, output } });
      // as with a hosted API, the client asks for the answer, once the response that made the
      // call (its holding line still speaking) is done: one response at a time
      this.answerAfter = event.response_id;
    }
  }

  itemCreated(event) {
    if (event.item?.type === "function_call_output") this.transcript.toolResult(event.item.call_id, event.item.output);
  }

  responseDone(event) {
    const response = event.response;
    if (this.answerAfter === response.id) {
      this.answerAfter = null;
      this.socket.send({ type: "response.create" });
    }
    for (const item of response.output ?? []) {
      this.liveItems.delete(item.id);
      if (item.type !== "message") continue;
      this.transcript.agentComplete(item.id, { heardInFull: response.status === "completed" });
      if (response.status !== "completed") this.transcript.agentStopped(item.id, response.status);
    }
    if (response.status === "cancelled") this.player.dropResponse(response.id);
    const reason = response.status_details?.reason;
    ui.status.dataset.lastResponse = reason ? `${response.status}:${reason}` : response.status;
  }

  localStage(event, arrivedMs) {
    this.serverOffsetMs = Math.min(this.serverOffsetMs, arrivedMs - event.perf * 1000);
    if (event.stage === "response_start" && event.turn_id && event.response_id) {
      this.turnOfResponse.set(event.response_id, event.turn_id);
      return;
    }
    if (!["llm_first_token", "tts_first_audio", "first_audio_out"].includes(event.stage)) return;
    const turnId = event.turn_id ?? this.turnOfResponse.get(event.response_id);
    this.waterfall.mark(turnId, event.stage, event.perf * 1000 + this.serverOffsetMs);
  }

  serverError(event) {
    showAlert(`The server said: ${event.error?.message ?? "an error"}`, "server");
  }

  // --- every frame: played audio, revealed words, the level meter ---------------------------

  tick() {
    if (this.ended) return;
    const heardMs = this.player.heardMsTotal();
    ui.played.textContent = `${(heardMs / 1000).toFixed(1)} s`;
    ui.played.dataset.ms = Math.round(heardMs);
    ui.played.dataset.playing = this.player.playing;
    this.transcript.reveal((itemId) => this.player.heardMs(itemId));
    ui.level.value = Math.max(-70, this.levelDbfs);
    requestAnimationFrame(() => this.tick());
  }
}

const HANDLERS = {
  "session.created": Call.prototype.sessionUpdated,
  "session.updated": Call.prototype.sessionUpdated,
  "input_audio_buffer.speech_started": Call.prototype.speechStarted,
  "input_audio_buffer.speech_stopped": Call.prototype.speechStopped,
  "input_audio_buffer.committed": Call.prototype.committed,
  "conversation.item.input_audio_transcription.delta": function (event) { this.transcript.callerPartial(event); },
  "conversation.item.input_audio_transcription.completed": Call.prototype.transcriptionCompleted,
  "response.created": Call.prototype.responseCreated,
  "response.output_item.added": Call.prototype.outputItemAdded,
  "response.output_audio.delta": Call.prototype.audioDelta,
  "response.audio.delta": Call.prototype.audioDelta, // the beta name
  "response.output_audio_transcript.delta": function (event) { this.transcript.agentText(event.item_id, event.delta); },
  "response.audio_transcript.delta": function (event) { this.transcript.agentText(event.item_id, event.delta); },
  "response.function_call_arguments.delta": function (event) { this.transcript.toolArguments(event.call_id, event.delta); },
  "response.function_call_arguments.done": Call.prototype.functionCallDone,
  "conversation.item.created": Call.prototype.itemCreated, // the beta name
  "conversation.item.done": Call.prototype.itemCreated, // GA: an item is complete
  "conversation.item.truncated": function (event) { this.transcript.agentTruncated(event.item_id, event.transcript ?? "", event.audio_end_ms); },
  "response.done": Call.prototype.responseDone,
  "x.stage": Call.prototype.localStage,
  error: Call.prototype.serverError,
};

// --- the page ---------------------------------------------------------------------------------

let call = null;

function setStatus(state, text) {
  ui.status.dataset.state = state;
  ui.status.textContent = text;
}

function showAlert(message, kind) {
  ui.alert.textContent = message;
  ui.alert.dataset.kind = kind;
  ui.alert.hidden = false;
}

/** A finished call's recording, where the server records (`serve --record`): a download link.
 * 202 while it is being recorded or written, 404 where the server does not record. */
async function offerRecording(sessionId, token) {
  const url = `/recordings/${encodeURIComponent(sessionId)}/call.wav`;
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  for (let attempt = 0; attempt < RECORDING_TRIES; attempt++) {
    let reply;
    try {
      reply = await fetch(url, { headers, cache: "no-store" });
    } catch {
      return; // the server is gone
    }
    if (reply.status === 200) {
      if (ui.recording.href) URL.revokeObjectURL(ui.recording.href);
      const wav = await reply.blob();
      ui.recording.href = URL.createObjectURL(wav);
      ui.recording.dataset.bytes = wav.size;
      ui.recording.download = `call-${sessionId}.wav`;
      ui.recording.hidden = false;
      return;
    }
    if (reply.status !== 202) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function endCall() {
  call = null;
  ui.start.disabled = false;
  ui.stop.disabled = true;
}

ui.start.addEventListener("click", async () => {
  ui.alert.hidden = true;
  ui.recording.hidden = true;
  ui.start.disabled = true;
  ui.stop.disabled = false;
  call = new Call();
  try {
    await call.start();
  } catch (error) {
    call.hangUp();
    endCall();
    const refused = error instanceof MicrophoneRefused;
    showAlert(refused ? error.message : `Could not start: ${error.message}`, refused ? "microphone" : "error");
    setStatus("error", refused ? "No microphone" : "Not connected");
  }
});

ui.stop.addEventListener("click", () => {
  call?.hangUp();
  endCall();
  setStatus("idle", "Call ended");
});

for (const input of [ui.turnPreset, ui.bargeIn, ui.offerTool, ui.instructions]) {
  input.addEventListener("change", () => call?.socket?.opened && call.sendSettings());
}

$("settings-form").addEventListener("submit", (event) => event.preventDefault());
ui.token.value = new URLSearchParams(location.search).get("token") ?? "";
