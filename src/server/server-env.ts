import type { Cadre } from '../app/create-cadre.ts';

/** What every route can read from the request context: who is asking and the Cadre they talk to. */
export interface ServerEnv {
  Variables: {
    userId: string;
    cadre: Cadre;
  };
}
