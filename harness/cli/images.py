"""`harness images build|list`: the Docker images arms and the proxy run in."""

from __future__ import annotations

import time

import typer

from harness.cli.lazy import typer_app
from harness.images import BuildOptions, ImageInfo, build_images, list_images

images_app = typer_app(
    help="Build and list the Docker images (base, harness-python, harness-arm, harness-proxy).",
    no_args_is_help=True,
)


def _progress(message: str) -> None:
    typer.echo(f"images: {message}", err=True)


@images_app.command("build")
def build_command(
    offline: bool = typer.Option(
        False,
        "--offline",
        help="Build the base image from Debian packages (debootstrap), never from a registry.",
    ),
    force: bool = typer.Option(False, "--force", help="Rebuild every image, even up-to-date ones."),
    extra: list[str] = typer.Option(
        [],
        "--extra",
        help="Also build an engine arm's image: mem0, graphiti, node, or engines (all three).",
    ),
    base: str | None = typer.Option(
        None,
        "--base",
        envvar="HARNESS_BASE_IMAGE",
        help="A registry base image with Python 3.13 (e.g. python:3.13-slim-trixie); when it "
        "cannot be pulled the offline base is built instead. Default: the offline base.",
    ),
) -> None:
    """Build the wheelhouse and the images, skipping each one whose inputs are unchanged."""
    started = time.monotonic()
    options = BuildOptions(offline=offline, force=force, base=base, extras=tuple(extra))
    built = build_images(options, _progress)
    for image in built:
        typer.echo(f"{image.tag:24} {image.id[7:19]}  inputs {image.inputs or '-':16}")
    _progress(f"done in {time.monotonic() - started:.0f}s")


@images_app.command("list")
def list_command() -> None:
    """Show the harness images with their inputs hash (the build skips an image whose matches)."""
    typer.echo(f"{'IMAGE':24} {'ID':12}  {'INPUTS':16}  {'CREATED':19}  SIZE")
    for row in list_images():
        if isinstance(row, ImageInfo):
            typer.echo(
                f"{row.tag:24} {row.id[7:19]}  {row.inputs or '-':16}  {row.created:19}  "
                f"{row.size_mb:.0f} MB"
            )
        else:
            typer.echo(f"{row.tag:24} {'(not built)':12}")
