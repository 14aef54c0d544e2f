// Package deploy holds bulkload's scheduler examples, outside the pipeline:
// Kubernetes manifests (k8s/), systemd units (systemd/) and a crontab line
// (cron/). It is a Go module of its own so that the main module does not
// depend on k8s.io/api; its tests decode every manifest strictly into the
// Kubernetes API types and check every flag the examples pass against
// `bulkload upload -h`.
package deploy
