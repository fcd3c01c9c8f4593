// The conversation as the caller experiences it: their words while they speak, the agent's
// words as they are heard, tool calls with their arguments and results.

// Piper joe-medium speaks about 15 characters a second; the estimate is replaced by each reply's
// own rate once all its audio has arrived.
const DEFAULT_MS_PER_CHAR = 65;

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export class TranscriptView {
  constructor(list) {
    this.list = list;
    this.callerLines = new Map(); // itemId -> {root, stable, tentative}
    this.agentLines = new Map(); // itemId -> {root, heard, note, text, receivedMs, complete, truncated}
    this.toolCards = new Map(); // callId -> {root, name, args, result}
    this.msPerChar = DEFAULT_MS_PER_CHAR;
  }

  append(node) {
    this.list.append(node);
    node.scrollIntoView({ block: "nearest" });
  }

  // --- the caller -------------------------------------------------------------------------

  callerLine(itemId) {
    let line = this.callerLines.get(itemId);
    if (!line) {
      const root = element("li", "line caller partial");
      root.dataset.itemId = itemId;
      root.append(element("span", "who", "You"));
      const text = element("p", "text");
      const stable = element("span", "stable");
      const tentative = element("span", "tentative", "…");
      text.append(stable, tentative);
      root.append(text);
      line = { root, stable, tentative };
      this.callerLines.set(itemId, line);
      this.append(root);
    }
    return line;
  }

  /** A partial transcript: `stable` will not change, `tentative` may (local fields), or the delta. */
  callerPartial(event) {
    const line = this.callerLine(event.item_id);
    if (event.stable !== undefined || event.tentative !== undefined) {
      line.stable.textContent = event.stable ?? "";
      line.tentative.textContent = (event.stable && event.tentative ? " " : "") + (event.tentative ?? "");
    } else {
      line.stable.textContent += event.delta ?? "";
      line.tentative.textContent = "";
    }
  }

  callerFinal(itemId, transcript) {
    const line = this.callerLine(itemId);
    line.stable.textContent = transcript || "(no words)";
    line.tentative.textContent = "";
    line.root.classList.remove("partial");
  }

  /** Speech that never became a turn (a cough, a backchannel under the agent). */
  callerDropped(itemId) {
    const line = this.callerLines.get(itemId);
    if (line && line.root.classList.contains("partial") && !line.stable.textContent) line.root.remove();
  }

  // --- the agent --------------------------------------------------------------------------

  agentLine(itemId) {
    let line = this.agentLines.get(itemId);
    if (!line) {
      const root = element("li", "line agent speaking");
      root.dataset.itemId = itemId;
      root.append(element("span", "who", "Agent"));
      const text = element("p", "text");
      const heard = element("span", "heard");
      const note = element("span", "note");
      text.append(heard, note);
      root.append(text);
      line = { root, heard, note, text: "", receivedMs: 0, complete: false, truncated: false };
      this.agentLines.set(itemId, line);
      this.append(root);
    }
    return line;
  }

  agentText(itemId, delta) {
    this.agentLine(itemId).text += delta;
  }

  agentAudio(itemId, ms) {
    this.agentLine(itemId).receivedMs += ms;
  }

  /** No more audio will come for this item; a reply heard in full teaches the speaking rate. */
  agentComplete(itemId, { heardInFull }) {
    const line = this.agentLines.get(itemId);
    if (!line || line.complete) return;
    line.complete = true;
    if (heardInFull && line.text.length > 20 && line.receivedMs > 0) {
      this.msPerChar = line.receivedMs / line.text.length;
    }
  }

  /** Show as much of each reply as has been heard, assuming an even speaking rate. */
  reveal(heardMsOf) {
    for (const [itemId, line] of this.agentLines) {
      if (line.truncated || !line.root.classList.contains("speaking")) continue;
      const heardMs = heardMsOf(itemId);
      const totalMs = line.complete ? line.receivedMs : Math.max(line.receivedMs, line.text.length * this.msPerChar);
      let chars = totalMs > 0 ? Math.floor((line.text.length * heardMs) / totalMs) : 0;
      if (chars < line.text.length) chars = line.text.lastIndexOf(" ", chars) + 1; // whole words only
      line.heard.textContent = line.text.slice(0, Math.max(0, chars));
      if (line.complete && heardMs >= line.receivedMs - 1) line.root.classList.remove("speaking");
    }
  }

  /** What the caller heard before cutting in, from the server (conversation.item.truncated). */
  agentTruncated(itemId, transcript, audioEndMs) {
    const line = this.agentLine(itemId);
    line.truncated = true;
    // the GA event carries no transcript: then the words revealed as they played are what was heard
    if (transcript) line.heard.textContent = transcript;
    line.note.textContent = ` — cut off after ${(audioEndMs / 1000).toFixed(1)} s`;
    line.root.classList.remove("speaking");
    line.root.classList.add("interrupted");
  }

  /** The reply ended without being heard to its end (cancelled or failed): stop revealing. */
  agentStopped(itemId, status) {
    const line = this.agentLines.get(itemId);
    if (!line || line.truncated) return;
    line.root.classList.remove("speaking");
    line.root.classList.add("interrupted");
    if (!line.heard.textContent) line.note.textContent = `(${status} before it was heard)`;
  }

  // --- tools ------------------------------------------------------------------------------

  toolCard(callId) {
    let card = this.toolCards.get(callId);
    if (!card) {
      const root = element("li", "line tool running");
      root.dataset.callId = callId;
      root.append(element("span", "who", "Tool"));
      const body = element("div", "text");
      const name = element("code", "tool-name", "…");
      const args = element("pre", "tool-args");
      const result = element("pre", "tool-result", "running…");
      body.append(name, args, result);
      root.append(body);
      card = { root, name, args, result };
      this.toolCards.set(callId, card);
      this.append(root);
    }
    return card;
  }

  toolArguments(callId, delta) {
    this.toolCard(callId).args.textContent += delta;
  }

  toolCall(callId, name, argumentsText) {
    const card = this.toolCard(callId);
    card.name.textContent = name;
    try {
      card.args.textContent = JSON.stringify(JSON.parse(argumentsText), null, 1);
    } catch {
      card.args.textContent = argumentsText;
    }
  }

  toolResult(callId, output) {
    const card = this.toolCard(callId);
    card.root.classList.remove("running");
    card.result.textContent = `→ ${output}`;
  }
}
