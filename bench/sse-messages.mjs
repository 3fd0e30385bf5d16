// Splits a server-sent-events response body into messages: calls onMessage(text) for each one (its
// lines, without the blank line that ends it) until it returns false. Shared by the bench drivers.
export const sseMessages = (response, onMessage) => {
  let buf = '', more = true;
  response.setEncoding('utf8');
  response.on('data', d => {
    buf += d;
    let end;
    while (more && (end = buf.indexOf('\n\n')) >= 0) {
      const msg = buf.slice(0, end); buf = buf.slice(end + 2);
      more = onMessage(msg) !== false;
    }
  });
};
/** The event JSON of an `id:` message (an event), else null (retry:, subscribed, comments). */
export const sseEventJson = msg => msg.startsWith('id: ') ? msg.slice(msg.indexOf('\ndata: ') + 7) : null;
