// The Airflow REST API this runner's API answers as: the version of vendor/airflow/
// v2-rest-api-generated.yaml (apache-airflow-core on PyPI), its contract.
export const AIRFLOW_API_VERSION = "3.3.2";
/** This API's own version, in its OpenAPI document: Airflow's, marked as the stand's. */
export const API_VERSION = `${AIRFLOW_API_VERSION}+stand`;
