// The caller's microphone: getUserMedia with the browser's voice processing on, and the capture
// worklet that hands back pcm16 chunks at the session's input rate.

export class MicrophoneRefused extends Error {}

export class Microphone {
  /** onChunk(pcm: Int16Array, levelDbfs: number) is called every 20 ms while open. */
  constructor(audioContext, { targetRateHz, onChunk }) {
    this.audioContext = audioContext;
    this.targetRateHz = targetRateHz;
    this.onChunk = onChunk;
    this.stream = null;
    this.node = null;
  }

  async open() {
    if (!navigator.mediaDevices?.getUserMedia) {
      throw new MicrophoneRefused(
        "This page cannot use a microphone here: open it as http://127.0.0.1:PORT/ or " +
          "http://localhost:PORT/ (browsers allow microphones only on local or https pages).",
      );
    }
    try {
      this.stream = await navigator.mediaDevices.getUserMedia({
        audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true, channelCount: 1 },
      });
    } catch (error) {
      const blocked = error.name === "NotAllowedError" || error.name === "SecurityError";
      throw new MicrophoneRefused(
        blocked
          ? "The browser refused the microphone. Allow it for this page (the icon at the left of " +
              "the address bar, or your system's privacy settings), then press Start talking again."
          : `No microphone could be opened (${error.name}: ${error.message}). Plug one in or ` +
              "check your system's sound settings, then press Start talking again.",
      );
    }
    await this.audioContext.audioWorklet.addModule("audio-worklet.js");
    const source = this.audioContext.createMediaStreamSource(this.stream);
    this.node = new AudioWorkletNode(this.audioContext, "microphone-capture", {
      numberOfInputs: 1,
      numberOfOutputs: 0,
      channelCount: 1,
      channelCountMode: "explicit",
      processorOptions: { targetRateHz: this.targetRateHz },
    });
    this.node.port.onmessage = (event) => this.onChunk(event.data.pcm, event.data.levelDbfs);
    source.connect(this.node);
  }

  setTargetRate(targetRateHz) {
    this.targetRateHz = targetRateHz;
    this.node?.port.postMessage({ targetRateHz });
  }

  close() {
    this.node?.disconnect();
    this.node = null;
    for (const track of this.stream?.getTracks() ?? []) track.stop();
    this.stream = null;
  }
}
