package docker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/elasticity-dev/elasticity/provision"
)

func clientPauseOptions() client.ContainerPauseOptions     { return client.ContainerPauseOptions{} }
func clientUnpauseOptions() client.ContainerUnpauseOptions { return client.ContainerUnpauseOptions{} }

func (p *Provider) withClient(ctx context.Context, fn func(c *testcontainers.DockerClient) error) error {
	c, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return fmt.Errorf("docker: connecting to the engine: %w", err)
	}
	defer c.Close()
	return fn(c)
}

// Sweep implements provision.Sweeper: containers and networks labelled
// elasticity.created-by=elasticity whose keep-until has passed (or, with
// runID set through SweepRun, every one of that run).
func (p *Provider) Sweep(ctx context.Context, now time.Time, dryRun bool) ([]provision.Resource, error) {
	return p.sweep(ctx, now, dryRun, "")
}

// SweepRun removes everything of one run regardless of keep-until.
func (p *Provider) SweepRun(ctx context.Context, runID string, dryRun bool) ([]provision.Resource, error) {
	return p.sweep(ctx, time.Time{}, dryRun, runID)
}

func (p *Provider) sweep(ctx context.Context, now time.Time, dryRun bool, runID string) ([]provision.Resource, error) {
	var res []provision.Resource
	err := p.withClient(ctx, func(c *testcontainers.DockerClient) error {
		f := client.Filters{}.Add("label", LabelCreatedBy+"=elasticity")
		if runID != "" {
			f = f.Add("label", LabelRunID+"="+runID)
		}
		cs, err := c.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
		if err != nil {
			return fmt.Errorf("docker gc: listing containers: %w", err)
		}
		var errs []error
		for _, s := range cs.Items {
			r := resource("container", s.ID, strings.TrimPrefix(firstName(s.Names), "/"), s.Labels, now, runID)
			res = append(res, r)
			if r.Expired && !dryRun {
				if _, err := c.ContainerRemove(ctx, s.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
					errs = append(errs, fmt.Errorf("docker gc: removing container %s: %w", r.Name, err))
				}
			}
		}
		ns, err := c.NetworkList(ctx, client.NetworkListOptions{Filters: f})
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("docker gc: listing networks: %w", err))...)
		}
		for _, n := range ns.Items {
			r := resource("network", n.ID, n.Name, n.Labels, now, runID)
			res = append(res, r)
			if r.Expired && !dryRun {
				if _, err := c.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{}); err != nil {
					errs = append(errs, fmt.Errorf("docker gc: removing network %s: %w", r.Name, err))
				}
			}
		}
		return errors.Join(errs...)
	})
	return res, err
}

func firstName(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

func resource(kind, id, name string, labels map[string]string, now time.Time, runID string) provision.Resource {
	ku, err := time.Parse(time.RFC3339, labels[LabelKeepUntil])
	expired := runID != "" || (err == nil && now.After(ku))
	return provision.Resource{Kind: kind, ID: id, Name: name, RunID: labels[LabelRunID], KeepUntil: ku, Expired: expired}
}
