// Microphone capture on the audio thread: mono, resampled to the session's input rate, posted
// as pcm16 chunks of CHUNK_MS with their level, so the main thread only base64-encodes and sends.

const CHUNK_MS = 20; // one append per 20 ms, as a telephony stack or a microphone callback sends

class MicrophoneCapture extends AudioWorkletProcessor {
  constructor(options) {
    super();
    this.setTargetRate(options.processorOptions.targetRateHz);
    this.port.onmessage = (event) => {
      if (event.data.targetRateHz) this.setTargetRate(event.data.targetRateHz);
    };
  }

  setTargetRate(targetRateHz) {
    this.targetRateHz = targetRateHz;
    this.step = sampleRate / targetRateHz; // input samples per output sample
    this.position = 0; // where the next output sample falls, in input samples from `previous`
    this.previous = 0; // the last input sample of the block before
    this.chunk = new Int16Array(Math.round((targetRateHz * CHUNK_MS) / 1000));
    this.filled = 0;
    this.sumSquares = 0;
  }

  process(inputs) {
    const channels = inputs[0];
    if (!channels || channels.length === 0) return true;
    const input = channels[0]; // echo cancellation works on mono; the first channel is the voice
    // Linear interpolation: speech carries little above 8 kHz, and the server resamples to 16 kHz.
    while (this.position < input.length) {
      const index = Math.floor(this.position);
      const fraction = this.position - index;
      const left = index === 0 ? this.previous : input[index - 1];
      const right = input[index];
      const sample = left + (right - left) * fraction;
      this.sumSquares += sample * sample;
      const clipped = Math.max(-1, Math.min(1, sample));
      this.chunk[this.filled++] = clipped < 0 ? clipped * 0x8000 : clipped * 0x7fff;
      if (this.filled === this.chunk.length) this.flush();
      this.position += this.step;
    }
    this.position -= input.length;
    this.previous = input[input.length - 1];
    return true;
  }

  flush() {
    const rms = Math.sqrt(this.sumSquares / this.filled);
    const levelDbfs = rms > 0 ? 20 * Math.log10(rms) : -120;
    const pcm = this.chunk.slice(0, this.filled);
    this.port.postMessage({ pcm, levelDbfs }, [pcm.buffer]);
    this.filled = 0;
    this.sumSquares = 0;
  }
}

registerProcessor("microphone-capture", MicrophoneCapture);
