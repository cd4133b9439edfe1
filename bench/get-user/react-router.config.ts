import type { Config } from "@react-router/dev/config";
import app from "../../react-router.config";

// The app's React Router config, with the app folder one level up from this bench-only project;
// the build lands in bench/get-user/build/ (gitignored), never in the app's build/.
export default {
  ...app,
  appDirectory: "../../app",
} satisfies Config;
