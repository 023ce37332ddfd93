/// <reference types="node" />
/** The bench scripts' shared measures: medians, and wall and CPU time of this process. */

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];

export interface Timing {
  wallMs: number;
  cpuMs: number;
}

/** CPU time this process has used (user and system), in ms. */
export const cpuNow = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
