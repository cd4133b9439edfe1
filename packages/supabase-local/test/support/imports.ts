// The modules a TypeScript file imports, read with oxc's parser (its module record): import and
// export-from declarations and import() calls with a literal specifier, each marked type-only when
// it disappears from the emitted JavaScript (`import type`, or every name imported `type`).
import { parseSync } from "oxc-parser";

export interface ModuleImport {
  specifier: string;
  typeOnly: boolean;
  /** an import() call */
  dynamic: boolean;
}

const STRING_LITERAL = /^(["'`])([^"'`\\$]*)\1$/;

export function moduleImports(file: string, text: string): ModuleImport[] {
  const { module, errors } = parseSync(file, text);
  if (errors.length > 0) throw new Error(`${file}: ${errors[0]?.message}`);
  const imports: ModuleImport[] = module.staticImports.map((i) => ({
    specifier: i.moduleRequest.value,
    typeOnly: i.entries.length > 0 && i.entries.every((entry) => entry.isType),
    dynamic: false,
  }));
  for (const declaration of module.staticExports)
    for (const entry of declaration.entries)
      if (entry.moduleRequest)
        imports.push({
          specifier: entry.moduleRequest.value,
          typeOnly: entry.isType,
          dynamic: false,
        });
  for (const call of module.dynamicImports) {
    const literal = STRING_LITERAL.exec(
      text.slice(call.moduleRequest.start, call.moduleRequest.end),
    );
    if (literal) imports.push({ specifier: literal[2] as string, typeOnly: false, dynamic: true });
  }
  return imports;
}
