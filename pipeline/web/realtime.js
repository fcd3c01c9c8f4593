// The realtime-API socket, as a browser opens it: same host, path /v1/realtime, the token (if
// any) as the subprotocol `openai-insecure-api-key.<token>` since a browser cannot set headers.

export const REALTIME_PATH = "/v1/realtime";

export class RealtimeSocket {
  /** onEvent(event, arrivedMs) for every server event; onClosed(reason) once, if it drops. */
  constructor({ token, onEvent, onOpen, onClosed }) {
    this.token = token;
    this.onEvent = onEvent;
    this.onOpen = onOpen;
    this.onClosed = onClosed;
    this.socket = null;
    this.opened = false;
    this.closedByUs = false;
  }

  connect() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const protocols = ["realtime"];
    if (this.token) protocols.push(`openai-insecure-api-key.${this.token}`);
    this.socket = new WebSocket(`${scheme}//${location.host}${REALTIME_PATH}`, protocols);
    this.socket.onopen = () => {
      this.opened = true;
      this.onOpen();
    };
    this.socket.onmessage = (message) => {
      const arrivedMs = performance.now();
      let event;
      try {
        event = JSON.parse(message.data);
      } catch {
        return; // not ours to judge: the protocol is JSON, anything else is skipped
      }
      this.onEvent(event, arrivedMs);
    };
    this.socket.onclose = (close) => {
      if (!this.closedByUs) this.explain(close).then((reason) => this.onClosed(reason));
    };
  }

  /** Why the socket went away, as something the user can act on. */
  async explain(close) {
    if (this.opened) {
      const reason = close.reason ? ` (${close.reason})` : "";
      if (close.code === 1000) return { kind: "ended", message: `The call ended${reason}. Press Start talking for a new one.` };
      return {
        kind: "gone",
        message: `The connection to the server was lost${reason}. Is \`python -m pipeline serve\` still running? ` +
          "Restart it if needed, then press Start talking.",
      };
    }
    // The handshake failed: a browser does not say why, so ask the same path over plain HTTP.
    try {
      const headers = this.token ? { Authorization: `Bearer ${this.token}` } : {};
      const probe = await fetch(REALTIME_PATH, { headers, cache: "no-store" });
      if (probe.status === 401) {
        return {
          kind: "token",
          message: this.token
            ? "The server refused this token. Check the token it was started with (--token) and enter it in Settings."
            : "This server needs a token (it was started with --token). Enter it in Settings → Token, " +
              "or open this page as …/?token=YOUR_TOKEN.",
        };
      }
    } catch {
      // unreachable: fall through to the message below
    }
    return {
      kind: "gone",
      message: "The server is not reachable. Start it with `python -m pipeline serve`, then press Start talking again.",
    };
  }

  send(event) {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(event));
  }

  close() {
    this.closedByUs = true;
    this.socket?.close(1000, "the caller hung up");
  }
}

/** Base64 of the bytes of a typed array (chunked: String.fromCharCode takes limited arguments). */
export function toBase64(typedArray) {
  const bytes = new Uint8Array(typedArray.buffer, typedArray.byteOffset, typedArray.byteLength);
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/** pcm16 samples from base64 (little-endian, as every platform a browser runs on). */
export function pcm16FromBase64(text) {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new Int16Array(bytes.buffer, 0, bytes.length >> 1);
}
