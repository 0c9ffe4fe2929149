"""What people look at: notebook displays and plots, the results viewer, the terminal progress bar."""
