"""Where memory lives: the backend contract, SQLAlchemy schema v7, migrations, forensic opens."""
