import {
  createUserAdmin,
  deleteUserAdmin,
  generateLink,
  getUserAdmin,
  listUsers,
  updateUserAdmin,
} from "./admin.ts";
import type { Handler } from "./index.ts";
import { invite } from "./invite.ts";
import { logout } from "./logout.ts";
import { challengeFactor, enrollFactor, unenrollFactor, verifyFactor } from "./mfa.ts";
import { otp } from "./otp.ts";
import { reauthenticate } from "./reauthenticate.ts";
import { recover } from "./recover.ts";
import { resend } from "./resend.ts";
import { signup } from "./signup.ts";
import { token } from "./token.ts";
import { getUser, updateUser } from "./user.ts";
import { verify } from "./verify.ts";

/** The endpoint table: method, path (relative to /auth/v1), handler — as the real router. */
export const routes: Array<[string, string, Handler]> = [
  ["POST", "/signup", signup],
  ["POST", "/token", token],
  ["POST", "/otp", otp],
  ["POST", "/magiclink", otp],
  ["GET", "/verify", verify],
  ["POST", "/verify", verify],
  ["POST", "/recover", recover],
  ["POST", "/resend", resend],
  ["GET", "/user", getUser],
  ["PUT", "/user", updateUser],
  ["GET", "/reauthenticate", reauthenticate],
  ["POST", "/logout", logout],
  ["GET", "/admin/users", listUsers],
  ["POST", "/admin/users", createUserAdmin],
  ["GET", "/admin/users/:id", getUserAdmin],
  ["PUT", "/admin/users/:id", updateUserAdmin],
  ["DELETE", "/admin/users/:id", deleteUserAdmin],
  ["POST", "/admin/generate_link", generateLink],
  ["POST", "/invite", invite],
  ["POST", "/factors", enrollFactor],
  ["POST", "/factors/:id/challenge", challengeFactor],
  ["POST", "/factors/:id/verify", verifyFactor],
  ["DELETE", "/factors/:id", unenrollFactor],
];
