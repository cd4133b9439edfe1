// Starts the one local backend a test run uses (in memory, port 54329). Placeholder.
export default async function setup() {}
