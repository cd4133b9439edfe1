// The app in workerd answers a refused form (cross-site, too large) without reading its body, and
// workerd then resets that connection instead of reusing it. Cloudflare's edge hides this in
// production; here a client that kept the connection alive would see its next request fail with
// ECONNRESET. So the tests' fetch opens a connection per request.
import { Agent, setGlobalDispatcher } from "undici";

setGlobalDispatcher(new Agent({ pipelining: 0 }));
