// Server-sent events over fetch(): EventSource can neither POST nor send an Authorization header.

/** Yield the parsed JSON of each `data:` event of a text/event-stream response body. */
export async function* readEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value.replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = dataOf(frame);
        if (data !== null) yield JSON.parse(data);
      }
    }
    const data = dataOf(buffer);
    if (data !== null && data.trim()) yield JSON.parse(data);
  } finally {
    reader.releaseLock();
  }
}

function dataOf(frame) {
  const lines = frame.split("\n").filter((line) => line.startsWith("data:"));
  if (!lines.length) return null;
  return lines.map((line) => line.slice(line.startsWith("data: ") ? 6 : 5)).join("\n");
}
