"""`python -m arms.toy [--host H] [--port P]`: serve a toy arm of the coupled example (ARM_ROLE)."""

from arms.server import main
from arms.toy import ToyArm

if __name__ == "__main__":
    main(ToyArm)
