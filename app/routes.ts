import { index, type RouteConfig, route } from "@react-router/dev/routes";

export default [
  index("routes/home.tsx"),
  // Anything else: a real 404 page rendered inside the layout (root loader and middleware run).
  route("*", "routes/not-found.tsx"),
] satisfies RouteConfig;
