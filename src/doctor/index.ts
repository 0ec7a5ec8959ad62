/**
 * `baton doctor`: collect a report from explicit sources, then print it as a
 * table or JSON. The same report serves `GET /health/ready`.
 */
export { collectDoctorReport } from './collect.js';
export { doctorJsonValue, formatDoctorTable, toDoctorJson, type DoctorJson } from './format.js';
export { claudeLoginState, codexLoginState, type LoginState } from './login.js';
export {
  exitCode,
  overallStatus,
  type DoctorArea,
  type DoctorFact,
  type DoctorReport,
  type DoctorRow,
  type DoctorStatus,
} from './report.js';
export {
  VERSION_TIMEOUT_MS,
  readCliVersion,
  type ChannelProbe,
  type DatabaseProbe,
  type DoctorSources,
  type StartDetection,
  type VersionProbe,
} from './sources.js';
