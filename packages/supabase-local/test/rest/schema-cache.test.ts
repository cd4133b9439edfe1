// The schema cache reloads after DDL (event trigger -> NOTIFY pgrst) without a restart.
import { expect, test } from "vitest";
import { localBackend as backend } from "./support/backend.ts";

test("new tables and relationships appear after DDL; ambiguity is PGRST201", async () => {
  const b = await backend();
  const service = b.client(b.serviceKey);
  expect((await service.from("rest_tmp_people").select()).error?.code).toBe("PGRST205");
  await b.db.exec(`
    CREATE TABLE public.rest_tmp_people (id int PRIMARY KEY, name text);
    CREATE TABLE public.rest_tmp_loans (
      id int PRIMARY KEY,
      lender int REFERENCES public.rest_tmp_people (id),
      borrower int REFERENCES public.rest_tmp_people (id)
    );
    GRANT ALL ON public.rest_tmp_people, public.rest_tmp_loans TO service_role;
    INSERT INTO public.rest_tmp_people VALUES (1, 'ann'), (2, 'ben');
    INSERT INTO public.rest_tmp_loans VALUES (1, 1, 2);
  `);
  const people = await service.from("rest_tmp_people").select("name").order("id");
  expect(people.data).toEqual([{ name: "ann" }, { name: "ben" }]);

  const ambiguous = await service.from("rest_tmp_loans").select("rest_tmp_people(name)");
  expect(ambiguous.status).toBe(300);
  expect(ambiguous.error?.code).toBe("PGRST201");
  expect(ambiguous.error?.hint).toContain("'rest_tmp_people!rest_tmp_loans_lender_fkey'");

  const hinted = await service
    .from("rest_tmp_loans")
    .select(
      "lender:rest_tmp_people!lender(name), borrower:rest_tmp_people!rest_tmp_loans_borrower_fkey(name)",
    )
    .single();
  expect(hinted.data).toEqual({ lender: { name: "ann" }, borrower: { name: "ben" } });

  await b.db.exec("DROP TABLE public.rest_tmp_loans, public.rest_tmp_people");
  expect((await service.from("rest_tmp_people").select()).error?.code).toBe("PGRST205");
});
