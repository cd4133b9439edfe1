// The order of the test files. Vitest runs projects one after another (a worker that keeps its
// module graph, `isolate: false`, serves one project) and, within a project, the files that took
// longest last time first. By project name that put `unit` last: its workerd pool starts in a few
// seconds with one core idle, at the end of the run. This order starts the run with it and with
// the backend's long files (CLI processes, snapshots), and ends with the integration tests: many
// short files that keep both cores busy to the end (the few tooling files go before them: last,
// they ran on one core while the other had nothing to do).
import { BaseSequencer, type TestSpecification } from "vitest/node";

const PROJECTS = ["unit", "local", "database", "tooling", "integration"];

export default class ProjectOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = PROJECTS.indexOf(file.project.name);
      return index === -1 ? PROJECTS.length : index;
    };
    // (a stable sort: each project keeps Vitest's own order of its files)
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
