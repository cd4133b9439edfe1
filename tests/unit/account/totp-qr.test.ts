import { describe, expect, it } from "vitest";
import { totpQrCode } from "../../../app/routes/account/parts/totp-qr";

describe("totpQrCode", () => {
  const svg = '<svg xmlns="http://www.w3.org/2000/svg"><rect fill="#000"/></svg>';
  it("re-encodes the SVG supabase-js hands over so # and quotes survive in <img src>", () => {
    const src = totpQrCode(`data:image/svg+xml;utf-8,${svg}`);
    expect(src.startsWith("data:image/svg+xml,")).toBe(true);
    expect(src).not.toMatch(/[#"<>]/);
    expect(decodeURIComponent(src.slice("data:image/svg+xml,".length))).toBe(svg);
  });

  it("accepts base64 and bare SVG; anything else gives nothing", () => {
    expect(totpQrCode(`data:image/svg+xml;base64,${btoa(svg)}`)).toBe(
      `data:image/svg+xml,${encodeURIComponent(svg)}`,
    );
    expect(totpQrCode(svg)).toBe(`data:image/svg+xml,${encodeURIComponent(svg)}`);
    expect(totpQrCode("javascript:alert(1)")).toBe("");
    expect(totpQrCode("data:text/html,<script>")).toBe("");
    expect(totpQrCode("")).toBe("");
  });
});
